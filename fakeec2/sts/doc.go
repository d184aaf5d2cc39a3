// Package sts emulates the two AWS STS calls the lab needs over the awsquery protocol,
// version 2011-06-15: GetCallerIdentity (who the access key is) and
// DecodeAuthorizationMessage (why a call was denied).
//
// STS keeps no state of its own: message.go shapes a decoded authorization message from
// a Denial, which fakeec2 (the keeper of denial reasons) hands over through Options;
// wire.go decodes the form, authorizes and encodes the XML answer.
//
// It imports only fakeec2/account and the standard library: never fakeec2 itself,
// k8s.io, sigs.k8s.io, cluster or labs.
package sts

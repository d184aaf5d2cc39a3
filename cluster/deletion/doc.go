// Package deletion deletes Kubernetes objects no lab controller will finish: it removes
// their finalizers first when asked, deletes only while the caller's precondition holds,
// and waits until objects are gone. reset and stop --uninstall (installs) share it.
//
// It imports client-go and x/sync only, nothing of the lab, so any package under cluster may
// use it. Each and DeleteAll keep a few calls in flight at once.
package deletion

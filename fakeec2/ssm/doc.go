// Package ssm emulates AWS Systems Manager Parameter Store (awsJson1_1, target prefix
// AmazonSSM): GetParameter, GetParameters, GetParametersByPath, PutParameter,
// DeleteParameter, DescribeParameters, GetParameterHistory and LabelParameterVersion,
// with versions, labels and selectors ("name:3", "name:label").
//
// The account's own parameters are durable (bucket "ssm-parameters"). The public
// parameters under /aws/ (the EKS-optimized AMI IDs Karpenter resolves its aliases
// through, built by eksami.go) are read-only to callers and are not durable: fakeec2
// hands them in with SetPublicParameters or SetEKSImages after New and whenever it
// publishes an AMI release.
//
// model.go holds the state and its rules and never sees JSON; wire.go decodes requests,
// checks policy, calls the model and encodes the answers.
//
// This package imports only fakeec2/account and the standard library. It must not import
// fakeec2 itself, k8s.io, sigs.k8s.io, cluster or labs.
package ssm

package karpenter

import (
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	apisv1 "github.com/karplab/karplab/cluster/karpenter/apis/v1"
)

// useLabNodeClass makes client-go's global scheme (the one Karpenter's manager and
// operatorpkg's object.GVK read) map karpenter.k8s.aws/v1 EC2NodeClass to the lab's Go
// type instead of karpenter-provider-aws's. Both packages are linked into this binary and a
// scheme holds one type per kind: the provider's registers itself at init, so the lab's
// own provider (ec2, kwok) gets a copy of the global scheme with its types in that group.
// It must run before anything reads scheme.Scheme (Karpenter's NewOperator).
func useLabNodeClass() error {
	s, err := LabScheme()
	if err != nil {
		return err
	}
	scheme.Scheme = s
	return nil
}

// LabScheme is a copy of client-go's global scheme (client-go's, Karpenter's and every
// other API registered there) in which karpenter.k8s.aws/v1 holds the lab's EC2NodeClass
// types, for clients of the lab's provider in a binary that links the real one.
func LabScheme() (*runtime.Scheme, error) {
	old := scheme.Scheme
	s := runtime.NewScheme()
	for _, gv := range old.PrioritizedVersionsAllGroups() {
		if gv.Group == apisv1.Group {
			continue
		}
		// The meta types (options, WatchEvent, Status) and their conversions, as every
		// group's AddToScheme registers them.
		metav1.AddToGroupVersion(s, gv)
		for kind, t := range old.KnownTypes(gv) {
			obj, ok := reflect.New(t).Interface().(runtime.Object)
			if !ok {
				return nil, fmt.Errorf("copying the scheme: %s %s is not a runtime.Object", gv, kind)
			}
			s.AddKnownTypeWithName(gv.WithKind(kind), obj)
		}
	}
	if err := apisv1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("registering the lab's EC2NodeClass: %w", err)
	}
	return s, nil
}

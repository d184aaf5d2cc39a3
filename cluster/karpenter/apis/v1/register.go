package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// Group is the API group of EC2NodeClass, the same as karpenter-provider-aws's.
const Group = "karpenter.k8s.aws"

var (
	// GroupVersion is karpenter.k8s.aws/v1.
	GroupVersion = schema.GroupVersion{Group: Group, Version: "v1"}

	// SchemeBuilder registers EC2NodeClass and EC2NodeClassList.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this group-version to a scheme, e.g. a
	// controller-runtime client's.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &EC2NodeClass{}, &EC2NodeClassList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Karpenter's operator builds its manager on client-go's global scheme.Scheme (so does
// karpenter-provider-aws, and sigs.k8s.io/karpenter registers its own APIs the same way),
// so importing this package must make EC2NodeClass known there.
func init() {
	if err := AddToScheme(scheme.Scheme); err != nil {
		panic(err)
	}
}

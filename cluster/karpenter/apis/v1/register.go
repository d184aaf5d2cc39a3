package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is the API group of EC2NodeClass, the same as karpenter-provider-aws's.
const Group = "karpenter.k8s.aws"

var (
	// GroupVersion is karpenter.k8s.aws/v1.
	GroupVersion = schema.GroupVersion{Group: Group, Version: "v1"}

	// SchemeBuilder registers EC2NodeClass and EC2NodeClassList.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this group-version to a scheme, e.g. a
	// controller-runtime client's. Nothing registers them in client-go's global scheme at
	// init: karpenter-provider-aws's own EC2NodeClass type takes that kind there whenever it
	// is linked in, and a scheme holds one type per kind (cluster/karpenter swaps the
	// global scheme for the lab's providers).
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &EC2NodeClass{}, &EC2NodeClassList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

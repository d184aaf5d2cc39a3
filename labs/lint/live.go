package lint

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	coreapis "sigs.k8s.io/karpenter/pkg/apis"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// NodePoolsResource is the resource List reads.
var NodePoolsResource = schema.GroupVersionResource{Group: coreapis.Group, Version: "v1", Resource: "nodepools"}

// List reads every NodePool from a cluster. The API server has validated them already.
func List(ctx context.Context, client dynamic.Interface) ([]Pool, error) {
	list, err := client.Resource(NodePoolsResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing NodePools (is Karpenter's NodePool CRD installed?): %w", err)
	}
	pools := make([]Pool, 0, len(list.Items))
	for i := range list.Items {
		pools = append(pools, Pool{Source: "cluster"})
		np, err := fromUnstructured(&list.Items[i])
		if err != nil {
			return nil, err
		}
		pools[i].NodePool = np
	}
	return pools, nil
}

func fromUnstructured(u *unstructured.Unstructured) (*karpv1.NodePool, error) {
	np := &karpv1.NodePool{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, np); err != nil {
		return nil, fmt.Errorf("decoding NodePool %q: %w", u.GetName(), err)
	}
	return np, nil
}

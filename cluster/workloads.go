package cluster

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// namespacedObject is one workload object of the default namespace, as reset and the
// baseline see it.
type namespacedObject struct {
	gvr    schema.GroupVersionResource
	name   string
	uid    types.UID
	owners []types.UID
}

// defaultWorkloadKinds are the default namespace's workload kinds, owners before what they own.
var defaultWorkloadKinds = []schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"},
	{Group: "batch", Version: "v1", Resource: "cronjobs"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
	{Version: "v1", Resource: "pods"},
}

// defaultWorkloads lists the default namespace's workloads and pods, owners first.
func defaultWorkloads(ctx context.Context, dyn dynamic.Interface) ([]namespacedObject, error) {
	var out []namespacedObject
	for _, gvr := range defaultWorkloadKinds {
		list, err := dyn.Resource(gvr).Namespace(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing %s in namespace default: %w", gvr.Resource, err)
		}
		for _, item := range list.Items {
			o := namespacedObject{gvr: gvr, name: item.GetName(), uid: item.GetUID()}
			for _, ref := range item.GetOwnerReferences() {
				o.owners = append(o.owners, ref.UID)
			}
			out = append(out, o)
		}
	}
	return out, nil
}

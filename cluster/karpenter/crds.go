package karpenter

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	awsapis "github.com/aws/karpenter-provider-aws/pkg/apis"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	kwokapis "sigs.k8s.io/karpenter/kwok/apis"
	coreapis "sigs.k8s.io/karpenter/pkg/apis"
)

// fieldManager owns the CRDs in server-side apply.
const fieldManager = "karplab"

// CRDs are what the provider's Helm chart (karpenter-crd) installs, embedded in
// karpenter-provider-aws/pkg/apis: its EC2NodeClass, and core's NodePool, NodeClaim and
// NodeOverlay with the karpenter.k8s.aws label-domain rules the provider adds; then core's
// CapacityBuffer, and the kwok provider's KWOKNodeClass (for --provider kwok).
func CRDs() []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	have := map[string]bool{}
	add := func(crds ...*apiextensionsv1.CustomResourceDefinition) {
		for _, crd := range crds {
			if !have[crd.Name] {
				have[crd.Name] = true
				out = append(out, crd.DeepCopy())
			}
		}
	}
	add(awsapis.CRDs...)
	add(coreapis.CRDs...)
	add(kwokapis.CRDs...)
	return out
}

// InstallCRDs server-side applies CRDs (so a newer lab updates an older cluster's CRDs,
// such as the EC2NodeClass schema of the lab's retired provider) and waits until each is
// Established.
func InstallCRDs(ctx context.Context, cfg *rest.Config) error {
	client, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building apiextensions client: %w", err)
	}
	crds := CRDs()
	for _, crd := range crds {
		crd.APIVersion = apiextensionsv1.SchemeGroupVersion.String()
		crd.Kind = "CustomResourceDefinition"
		crd.ResourceVersion = ""
		crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
		body, err := json.Marshal(crd)
		if err != nil {
			return fmt.Errorf("encoding CRD %s: %w", crd.Name, err)
		}
		if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, crd.Name, types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: fieldManager, Force: new(true)}); err != nil {
			return fmt.Errorf("applying CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range crds {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for CRD %s to be established: %w", crd.Name, err)
		}
	}
	return nil
}

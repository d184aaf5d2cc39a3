package labs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// fieldManager owns what labs apply (server-side apply), as kubectl's is "kubectl".
const fieldManager = "karplab-lab"

// DecodeManifests splits multi-document YAML into objects. name is used in errors.
func DecodeManifests(name string, data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for i := 1; ; i++ {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("%s: document %d has no apiVersion/kind", name, i)
		}
		objs = append(objs, u)
	}
}

// Apply server-side applies objs in order and reports each as kubectl does.
func (e *Env) Apply(ctx context.Context, objs []*unstructured.Unstructured, out io.Writer) error {
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		mapping, err := e.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			e.Mapper.Reset() // a CRD installed since the mapper last looked
			mapping, err = e.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		body, err := obj.MarshalJSON()
		if err != nil {
			return err
		}
		ri := e.Dynamic.Resource(mapping.Resource)
		force := true
		opts := metav1.PatchOptions{FieldManager: fieldManager, Force: &force}
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := obj.GetNamespace()
			if ns == "" {
				ns = "default"
			}
			_, err = ri.Namespace(ns).Patch(ctx, obj.GetName(), types.ApplyPatchType, body, opts)
		} else {
			_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, body, opts)
		}
		if err != nil {
			return fmt.Errorf("applying %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		fmt.Fprintf(out, "   %s/%s applied\n", mapping.Resource.Resource, obj.GetName())
	}
	return nil
}

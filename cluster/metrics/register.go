package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/yaml"

	kwokcrd "sigs.k8s.io/kwok/kustomize/crd"
	kwokusage "sigs.k8s.io/kwok/kustomize/metrics/usage"
	"sigs.k8s.io/kwok/pkg/apis/v1alpha1"
)

// The objects metrics-server's release manifest makes, by the same names, so what people
// look for is there: kube-system/metrics-server, APIService v1beta1.metrics.k8s.io, the
// ClusterRole system:aggregated-metrics-reader that gives view, edit and admin access to
// metrics. The Service differs: an ExternalName Service naming 127.0.0.1, because
// EndpointSlices may not hold loopback addresses and the embedded API server resolves an
// ExternalName Service to that name and the APIService's port.
const (
	serviceName      = "metrics-server"
	serviceNamespace = metav1.NamespaceSystem
	APIServiceName   = "v1beta1.metrics.k8s.io"
	readerRoleName   = "system:aggregated-metrics-reader"
	fieldManager     = "karplab-metrics-server"
	// DefaultClusterResourceUsage is kwok's default profile, installed with the CRDs: every
	// pod uses what its kwok.x-k8s.io/usage-cpu and kwok.x-k8s.io/usage-memory annotations
	// say, or 1m CPU and 1Mi memory.
	DefaultClusterResourceUsage = "usage-from-annotation"
)

var serverLabels = map[string]string{"k8s-app": "metrics-server"}

// installProfiles installs kwok's ResourceUsage and ClusterResourceUsage CRDs (the same
// definitions kwokctl installs), kwok's default ClusterResourceUsage if it is missing, and the
// metrics reader ClusterRole.
func (s *Server) installProfiles(ctx context.Context) error {
	cfg := s.opts.RESTConfig
	client, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("metrics: building the apiextensions client: %w", err)
	}
	var names []string
	for _, raw := range [][]byte{kwokcrd.ResourceUsage, kwokcrd.ClusterResourceUsage} {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			return fmt.Errorf("metrics: reading kwok's CRD: %w", err)
		}
		crd.TypeMeta = metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"}
		body, _ := json.Marshal(crd)
		if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, crd.Name, types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: fieldManager, Force: new(true)}); err != nil {
			return fmt.Errorf("metrics: applying CRD %s: %w", crd.Name, err)
		}
		names = append(names, crd.Name)
	}
	for _, name := range names {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
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
			return fmt.Errorf("metrics: waiting for CRD %s to be established: %w", name, err)
		}
	}
	if err := s.ensureDefaultProfile(ctx, false); err != nil {
		return err
	}
	role := rbacv1.ClusterRole{
		TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: readerRoleName, Labels: map[string]string{
			"k8s-app": "metrics-server",
			"rbac.authorization.k8s.io/aggregate-to-admin": "true",
			"rbac.authorization.k8s.io/aggregate-to-edit":  "true",
			"rbac.authorization.k8s.io/aggregate-to-view":  "true",
		}},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{groupVersion.Group}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list", "watch"}}},
	}
	body, _ := json.Marshal(role)
	if _, err := s.kube.RbacV1().ClusterRoles().Patch(ctx, role.Name, types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: fieldManager, Force: new(true)}); err != nil {
		return fmt.Errorf("metrics: applying ClusterRole %s: %w", role.Name, err)
	}
	return nil
}

// ensureDefaultProfile creates kwok's default ClusterResourceUsage, or with restore puts its
// spec back.
func (s *Server) ensureDefaultProfile(ctx context.Context, restore bool) error {
	var def v1alpha1.ClusterResourceUsage
	if err := yaml.Unmarshal([]byte(kwokusage.DefaultUsageFromAnnotation), &def); err != nil {
		return fmt.Errorf("metrics: reading kwok's default ClusterResourceUsage: %w", err)
	}
	crus := s.kwok.KwokV1alpha1().ClusterResourceUsages()
	got, err := crus.Get(ctx, def.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := crus.Create(ctx, &def, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("metrics: creating ClusterResourceUsage %s: %w", def.Name, err)
		}
	case err != nil:
		return fmt.Errorf("metrics: reading ClusterResourceUsage %s: %w", def.Name, err)
	case restore:
		got.Spec = def.Spec
		if _, err := crus.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("metrics: restoring ClusterResourceUsage %s: %w", def.Name, err)
		}
	}
	return nil
}

// resetProfiles deletes every ResourceUsage and every ClusterResourceUsage but the default,
// and restores the default's spec.
func (s *Server) resetProfiles(ctx context.Context) error {
	v1 := s.kwok.KwokV1alpha1()
	rus, err := v1.ResourceUsages("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("metrics: listing ResourceUsages: %w", err)
	}
	var errs []error
	for _, ru := range rus.Items {
		if err := v1.ResourceUsages(ru.Namespace).Delete(ctx, ru.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("metrics: deleting ResourceUsage %s/%s: %w", ru.Namespace, ru.Name, err))
		}
	}
	crus, err := v1.ClusterResourceUsages().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("metrics: listing ClusterResourceUsages: %w", err)
	}
	for _, cru := range crus.Items {
		if cru.Name == DefaultClusterResourceUsage {
			continue
		}
		if err := v1.ClusterResourceUsages().Delete(ctx, cru.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("metrics: deleting ClusterResourceUsage %s: %w", cru.Name, err))
		}
	}
	errs = append(errs, s.ensureDefaultProfile(ctx, true))
	return errors.Join(errs...)
}

// register points the Service and the APIService at the loopback port, with the serving
// certificate as the APIService's CA bundle.
func (s *Server) register(ctx context.Context, port int32, caPEM []byte) error {
	svc := corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: serviceName, Namespace: serviceNamespace, Labels: serverLabels},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "127.0.0.1",
			Ports:        []corev1.ServicePort{{Name: "https", Port: port, Protocol: corev1.ProtocolTCP}},
		},
	}
	body, _ := json.Marshal(svc)
	if _, err := s.kube.CoreV1().Services(serviceNamespace).Patch(ctx, serviceName, types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: fieldManager, Force: new(true)}); err != nil {
		return fmt.Errorf("metrics: applying Service %s/%s: %w", serviceNamespace, serviceName, err)
	}
	apiSvc := apiregistrationv1.APIService{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiregistrationv1.SchemeGroupVersion.String(), Kind: "APIService"},
		ObjectMeta: metav1.ObjectMeta{Name: APIServiceName, Labels: serverLabels},
		Spec: apiregistrationv1.APIServiceSpec{
			Service:              &apiregistrationv1.ServiceReference{Namespace: serviceNamespace, Name: serviceName, Port: new(port)},
			Group:                groupVersion.Group,
			Version:              groupVersion.Version,
			CABundle:             caPEM,
			GroupPriorityMinimum: 100,
			VersionPriority:      100,
		},
	}
	body, _ = json.Marshal(apiSvc)
	if _, err := s.aggregator.ApiregistrationV1().APIServices().Patch(ctx, APIServiceName, types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: fieldManager, Force: new(true)}); err != nil {
		return fmt.Errorf("metrics: applying APIService %s: %w", APIServiceName, err)
	}
	return nil
}

// waitAvailable waits for the aggregator's availability check to pass.
func (s *Server) waitAvailable(ctx context.Context, timeout time.Duration) error {
	last := "not checked yet"
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		got, err := s.aggregator.ApiregistrationV1().APIServices().Get(ctx, APIServiceName, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiregistrationv1.Available {
				if c.Status == apiregistrationv1.ConditionTrue {
					return true, nil
				}
				last = fmt.Sprintf("%s: %s", c.Reason, c.Message)
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("metrics: APIService %s not Available (%s): %w", APIServiceName, last, err)
	}
	return nil
}

// unregister removes the APIService and its Service, so that discovery does not report an
// unavailable group while no backend runs.
func (s *Server) unregister(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.aggregator.ApiregistrationV1().APIServices().Delete(ctx, APIServiceName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		s.log.Warn("deleting the metrics APIService", "err", err)
	}
	if err := s.kube.CoreV1().Services(serviceNamespace).Delete(ctx, serviceName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		s.log.Warn("deleting the metrics Service", "err", err)
	}
}

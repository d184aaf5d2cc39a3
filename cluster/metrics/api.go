package metrics

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// The wire: metrics.k8s.io/v1beta1 in JSON, YAML or protobuf (kubectl top asks for
// protobuf), lists as Tables for kubectl get, errors as metav1.Status, with the resources,
// verbs and messages metrics-server has.
var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	utilruntime.Must(metricsv1beta1.AddToScheme(scheme))
	utilruntime.Must(metav1.AddMetaToScheme(scheme))
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
}

var (
	groupVersion = metricsv1beta1.SchemeGroupVersion
	podsResource = schema.GroupResource{Group: groupVersion.Group, Resource: "podmetrics"}
	nodeResource = schema.GroupResource{Group: groupVersion.Group, Resource: "nodemetrics"}
)

func (s *Server) apiHandler() http.Handler {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }
	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		mux.HandleFunc("GET "+p, ok)
	}
	prefix := "/apis/" + groupVersion.String()
	mux.HandleFunc("GET /apis", s.discovery(groupList()))
	mux.HandleFunc("GET /apis/"+groupVersion.Group, s.discovery(&group))
	mux.HandleFunc("GET "+prefix, s.discovery(resourceList()))
	mux.HandleFunc("GET "+prefix+"/nodes", s.listNodes)
	mux.HandleFunc("GET "+prefix+"/nodes/{name}", s.getNode)
	mux.HandleFunc("GET "+prefix+"/pods", s.listPods)
	mux.HandleFunc("GET "+prefix+"/namespaces/{namespace}/pods", s.listPods)
	mux.HandleFunc("GET "+prefix+"/namespaces/{namespace}/pods/{name}", s.getPod)
	// No schemas are published (kubectl explain does not know PodMetrics); empty documents
	// keep the aggregator's OpenAPI controllers from retrying a missing spec forever.
	mux.HandleFunc("GET /openapi/v2", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"swagger":"2.0","info":{"title":"metrics-server (karplab)","version":"v1beta1"},"paths":{}}`))
	})
	mux.HandleFunc("GET /openapi/v3", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"paths":{}}`))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && strings.HasPrefix(r.URL.Path, prefix+"/") {
			writeError(w, r, apierrors.NewMethodNotSupported(podsResource, strings.ToLower(r.Method)))
			return
		}
		writeError(w, r, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path))
	})
	return trimSlash(mux)
}

// trimSlash serves "/apis/metrics.k8s.io/v1beta1/" as "/apis/metrics.k8s.io/v1beta1".
func trimSlash(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.URL.Path) > 1 && strings.HasSuffix(r.URL.Path, "/") {
			r.URL.Path = strings.TrimRight(r.URL.Path, "/")
		}
		next.ServeHTTP(w, r)
	})
}

var group = metav1.APIGroup{
	TypeMeta:         metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
	Name:             groupVersion.Group,
	Versions:         []metav1.GroupVersionForDiscovery{{GroupVersion: groupVersion.String(), Version: groupVersion.Version}},
	PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: groupVersion.String(), Version: groupVersion.Version},
}

func groupList() *metav1.APIGroupList {
	return &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{group}}
}

func resourceList() *metav1.APIResourceList {
	verbs := metav1.Verbs{"get", "list"}
	return &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: groupVersion.String(),
		APIResources: []metav1.APIResource{
			{Name: "nodes", Namespaced: false, Kind: "NodeMetrics", Verbs: verbs},
			{Name: "pods", Namespaced: true, Kind: "PodMetrics", Verbs: verbs},
		},
	}
}

func (s *Server) discovery(obj runtime.Object) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// Discovery is JSON (or protobuf) only: the aggregator asks for its aggregated
		// format first and falls back to this legacy document.
		responsewriters.WriteObjectNegotiated(codecs, negotiation.DefaultEndpointRestrictions, schema.GroupVersion{Version: "v1"}, w, r, http.StatusOK, obj, false)
	}
}

func writeError(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, codecs, groupVersion, w, r)
}

// query is a list request's parameters.
type query struct {
	labels labels.Selector
	fields fields.Selector
}

func parseQuery(w http.ResponseWriter, r *http.Request, resource schema.GroupResource, fieldNames ...string) (query, bool) {
	q := query{labels: labels.Everything(), fields: fields.Everything()}
	v := r.URL.Query()
	if v.Get("watch") == "true" || v.Get("watch") == "1" {
		writeError(w, r, apierrors.NewMethodNotSupported(resource, "watch"))
		return q, false
	}
	var err error
	if s := v.Get("labelSelector"); s != "" {
		if q.labels, err = labels.Parse(s); err != nil {
			writeError(w, r, apierrors.NewBadRequest(err.Error()))
			return q, false
		}
	}
	if s := v.Get("fieldSelector"); s != "" {
		if q.fields, err = fields.ParseSelector(s); err != nil {
			writeError(w, r, apierrors.NewBadRequest(err.Error()))
			return q, false
		}
		for _, req := range q.fields.Requirements() {
			if !slices.Contains(fieldNames, req.Field) {
				writeError(w, r, apierrors.NewBadRequest("field label not supported: "+req.Field))
				return q, false
			}
		}
	}
	return q, true
}

func (s *Server) listPods(w http.ResponseWriter, r *http.Request) {
	q, ok := parseQuery(w, r, podsResource, "metadata.name", "metadata.namespace")
	if !ok {
		return
	}
	ns := r.PathValue("namespace")
	list := &metricsv1beta1.PodMetricsList{TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: groupVersion.String()}}
	list.Items = s.podMetrics(func(r *podRecord) bool {
		return (ns == "" || r.ns == ns) && q.labels.Matches(labels.Set(r.labels)) &&
			q.fields.Matches(fields.Set{"metadata.name": r.name, "metadata.namespace": r.ns})
	})
	s.writeList(w, r, list, podTable)
}

func (s *Server) getPod(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	if _, err := s.pods.Pods(ns).Get(name); err != nil {
		writeError(w, r, apierrors.NewNotFound(corev1.Resource("pods"), name))
		return
	}
	items := s.podMetrics(func(r *podRecord) bool { return r.ns == ns && r.name == name })
	if len(items) == 0 {
		writeError(w, r, apierrors.NewNotFound(podsResource, ns+"/"+name))
		return
	}
	items[0].TypeMeta = metav1.TypeMeta{Kind: "PodMetrics", APIVersion: groupVersion.String()}
	responsewriters.WriteObjectNegotiated(codecs, negotiation.DefaultEndpointRestrictions, groupVersion, w, r, http.StatusOK, &items[0], false)
}

func (s *Server) listNodes(w http.ResponseWriter, r *http.Request) {
	q, ok := parseQuery(w, r, nodeResource, "metadata.name")
	if !ok {
		return
	}
	list := &metricsv1beta1.NodeMetricsList{TypeMeta: metav1.TypeMeta{Kind: "NodeMetricsList", APIVersion: groupVersion.String()}}
	list.Items = s.nodeMetrics(func(r *nodeRecord) bool {
		return q.labels.Matches(labels.Set(r.labels)) && q.fields.Matches(fields.Set{"metadata.name": r.name})
	})
	s.writeList(w, r, list, nodeTable)
}

func (s *Server) getNode(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if _, err := s.nodes.Get(name); err != nil {
		writeError(w, r, apierrors.NewNotFound(corev1.Resource("nodes"), name))
		return
	}
	items := s.nodeMetrics(func(r *nodeRecord) bool { return r.name == name })
	if len(items) == 0 {
		writeError(w, r, apierrors.NewNotFound(nodeResource, name))
		return
	}
	items[0].TypeMeta = metav1.TypeMeta{Kind: "NodeMetrics", APIVersion: groupVersion.String()}
	responsewriters.WriteObjectNegotiated(codecs, negotiation.DefaultEndpointRestrictions, groupVersion, w, r, http.StatusOK, &items[0], false)
}

// podMetrics returns the PodMetrics of the pods running at the last sample that keep says
// to keep, ordered by namespace and name.
func (s *Server) podMetrics(keep func(*podRecord) bool) []metricsv1beta1.PodMetrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := metav1.Now()
	var out []metricsv1beta1.PodMetrics
	for _, r := range s.podsByUID {
		if !r.running || !r.last.Equal(s.sampledAt) || !keep(r) {
			continue
		}
		m := metricsv1beta1.PodMetrics{
			ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: r.ns, Labels: r.labels, CreationTimestamp: now},
			Timestamp:  metav1.NewTime(r.last),
			Window:     metav1.Duration{Duration: s.opts.Resolution},
		}
		for _, c := range r.containers {
			m.Containers = append(m.Containers, metricsv1beta1.ContainerMetrics{Name: c.name, Usage: c.cur.resourceList()})
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b metricsv1beta1.PodMetrics) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func (s *Server) nodeMetrics(keep func(*nodeRecord) bool) []metricsv1beta1.NodeMetrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := metav1.Now()
	var out []metricsv1beta1.NodeMetrics
	for _, r := range s.nodesBy {
		if !keep(r) {
			continue
		}
		out = append(out, metricsv1beta1.NodeMetrics{
			ObjectMeta: metav1.ObjectMeta{Name: r.name, Labels: r.labels, CreationTimestamp: now},
			Timestamp:  metav1.NewTime(r.last),
			Window:     metav1.Duration{Duration: s.opts.Resolution},
			Usage:      r.cur.resourceList(),
		})
	}
	slices.SortFunc(out, func(a, b metricsv1beta1.NodeMetrics) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// resourceList is an amount as metrics-server reports it: CPU in nanocores, memory in bytes.
func (a amount) resourceList() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewScaledQuantity(a.cpu, resource.Nano),
		corev1.ResourceMemory: *resource.NewQuantity(a.memory, resource.BinarySI),
	}
}

// tableRestrictions accept meta.k8s.io Tables besides the object itself.
type tableRestrictions struct{}

func (tableRestrictions) AllowsMediaTypeTransform(_, _ string, gvk *schema.GroupVersionKind) bool {
	if gvk == nil {
		return true
	}
	return gvk.Group == metav1.GroupName && gvk.Kind == "Table" && (gvk.Version == "v1" || gvk.Version == "v1beta1")
}
func (tableRestrictions) AllowsServerVersion(string) bool  { return false }
func (tableRestrictions) AllowsStreamSchema(s string) bool { return s == "watch" }

// writeList writes list, or its Table when the client asks for one (kubectl get).
func (s *Server) writeList(w http.ResponseWriter, r *http.Request, list runtime.Object, table func(runtime.Object, time.Duration) *metav1.Table) {
	opts, _, err := negotiation.NegotiateOutputMediaType(r, codecs, tableRestrictions{})
	if err == nil && opts.Convert != nil && opts.Convert.Kind == "Table" {
		t := table(list, s.opts.Resolution)
		t.TypeMeta = metav1.TypeMeta{Kind: "Table", APIVersion: metav1.SchemeGroupVersion.String()}
		responsewriters.WriteObjectNegotiated(codecs, tableRestrictions{}, metav1.SchemeGroupVersion, w, r, http.StatusOK, t, true)
		return
	}
	responsewriters.WriteObjectNegotiated(codecs, negotiation.DefaultEndpointRestrictions, groupVersion, w, r, http.StatusOK, list, false)
}

// The Table columns metrics-server prints for kubectl get: name, cpu, memory, window.
var tableColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the resource"},
	{Name: "CPU", Type: "string", Format: "quantity", Description: "CPU usage"},
	{Name: "Memory", Type: "string", Format: "quantity", Description: "Memory usage"},
	{Name: "Window", Type: "string", Format: "duration", Description: "Time window over which usage was observed"},
}

func podTable(obj runtime.Object, window time.Duration) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: tableColumns}
	for _, m := range obj.(*metricsv1beta1.PodMetricsList).Items {
		var sum amount
		for _, c := range m.Containers {
			sum = sum.add(amountOf(c.Usage))
		}
		t.Rows = append(t.Rows, tableRow(m.ObjectMeta, sum, window))
	}
	return t
}

func nodeTable(obj runtime.Object, window time.Duration) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: tableColumns}
	for _, m := range obj.(*metricsv1beta1.NodeMetricsList).Items {
		t.Rows = append(t.Rows, tableRow(m.ObjectMeta, amountOf(m.Usage), window))
	}
	return t
}

func tableRow(meta metav1.ObjectMeta, a amount, window time.Duration) metav1.TableRow {
	u := a.usage()
	partial := metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: metav1.SchemeGroupVersion.String()},
		ObjectMeta: meta,
	}
	raw, _ := json.Marshal(partial)
	return metav1.TableRow{
		Cells:  []any{meta.Name, u.CPU.String(), u.Memory.String(), window.String()},
		Object: runtime.RawExtension{Raw: raw},
	}
}

package v1_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	v1 "github.com/karplab/karplab/cluster/karpenter/apis/v1"
)

const seedFile = "testdata/seed-ec2nodeclass.yaml"

// crdValidator checks a custom resource the way kube-apiserver's custom resource
// strategy does: prune, default, OpenAPI schema, list types, then CEL rules.
type crdValidator struct {
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

func internalCRD(t *testing.T) *apiextensions.CustomResourceDefinition {
	t.Helper()
	crd := v1.CRD()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		t.Fatalf("converting CRD to internal: %v", err)
	}
	return internal
}

func newCRDValidator(t *testing.T) *crdValidator {
	t.Helper()
	internal := internalCRD(t)
	if len(internal.Spec.Versions) != 1 {
		t.Fatalf("CRD has %d versions, want 1", len(internal.Spec.Versions))
	}
	// The internal form keeps a schema common to all versions in spec.validation.
	var props *apiextensions.JSONSchemaProps
	if internal.Spec.Validation != nil {
		props = internal.Spec.Validation.OpenAPIV3Schema
	} else if s := internal.Spec.Versions[0].Schema; s != nil {
		props = s.OpenAPIV3Schema
	}
	if props == nil {
		t.Fatal("CRD has no schema")
	}
	structural, err := structuralschema.NewStructural(props)
	if err != nil {
		t.Fatalf("structural schema: %v", err)
	}
	sv, _, err := apiservervalidation.NewSchemaValidator(props)
	if err != nil {
		t.Fatalf("schema validator: %v", err)
	}
	return &crdValidator{
		structural: structural,
		schema:     sv,
		cel:        cel.NewValidator(structural, true, celconfig.PerCallLimit),
	}
}

// validate prunes and defaults obj in place, then returns the API server's errors.
// oldObj is nil for a create.
func (v *crdValidator) validate(obj, oldObj map[string]any) field.ErrorList {
	structuralpruning.Prune(obj, v.structural, true)
	structuraldefaulting.Default(obj, v.structural)
	var errs field.ErrorList
	if oldObj == nil {
		errs = apiservervalidation.ValidateCustomResource(nil, obj, v.schema)
	} else {
		errs = apiservervalidation.ValidateCustomResourceUpdate(nil, obj, oldObj, v.schema)
	}
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, obj)...)
	// Like the API server, CEL rules only run on an object that passed the schema.
	if len(errs) > 0 {
		return errs
	}
	celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, obj, oldObj, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

func readSeed(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(seedFile)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func seedMap(t *testing.T) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal(readSeed(t), &m); err != nil {
		t.Fatalf("decoding seed: %v", err)
	}
	return m
}

func TestCRDIsValid(t *testing.T) {
	internal := internalCRD(t)
	// This runs the API server's CRD admission checks, CEL compilation and cost
	// estimation of every x-kubernetes-validations rule included.
	if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), internal); len(errs) > 0 {
		t.Fatalf("CRD rejected: %v", errs.ToAggregate())
	}
	crd := v1.CRD()
	if got, want := crd.Name, "ec2nodeclasses.karpenter.k8s.aws"; got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
	wantNames := apiextensionsv1.CustomResourceDefinitionNames{
		Plural: "ec2nodeclasses", Singular: "ec2nodeclass", Kind: "EC2NodeClass", ListKind: "EC2NodeClassList",
		ShortNames: []string{"ec2nc", "ec2ncs"}, Categories: []string{"karpenter"},
	}
	if diff := cmp.Diff(wantNames, crd.Spec.Names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if crd.Spec.Scope != apiextensionsv1.ClusterScoped {
		t.Errorf("scope = %q, want Cluster", crd.Spec.Scope)
	}
	ver := crd.Spec.Versions[0]
	if ver.Name != "v1" || !ver.Served || !ver.Storage {
		t.Errorf("version %q served=%v storage=%v, want v1 served storage", ver.Name, ver.Served, ver.Storage)
	}
	if ver.Subresources == nil || ver.Subresources.Status == nil {
		t.Errorf("no status subresource")
	}
	var cols []string
	for _, c := range ver.AdditionalPrinterColumns {
		cols = append(cols, c.Name+" "+c.JSONPath)
	}
	wantCols := []string{
		`Ready .status.conditions[?(@.type=="Ready")].status`,
		"Age .metadata.creationTimestamp",
		"Role .spec.role",
	}
	if diff := cmp.Diff(wantCols, cols); diff != "" {
		t.Errorf("printer columns (-want +got):\n%s", diff)
	}
	if got := v1.CRD(); got == crd {
		t.Errorf("CRD() returned the same pointer twice; callers may mutate it")
	}
}

// The seed must stay a verbatim excerpt of the course text, which sits beside the
// repository (../shared relative to the module root) in development and in CI.
func TestSeedFileIsVerbatim(t *testing.T) {
	course, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "..", "shared", "seed", "karpenter-node-provisioning.txt"))
	if err != nil {
		t.Skipf("course text not available: %v", err)
	}
	if !strings.Contains(string(course), string(readSeed(t))) {
		t.Errorf("%s is not a verbatim excerpt of the course text", seedFile)
	}
}

func TestSeedDecodesStrictly(t *testing.T) {
	var nc v1.EC2NodeClass
	if err := yaml.UnmarshalStrict(readSeed(t), &nc); err != nil {
		t.Fatalf("strict decode: %v", err)
	}
	size := resource.MustParse("80Gi")
	want := v1.EC2NodeClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass"},
		ObjectMeta: metav1.ObjectMeta{Name: "ziba-general"},
		Spec: v1.EC2NodeClassSpec{
			Role:                       "KarpenterNodeRole-ziba-production",
			AMISelectorTerms:           []v1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []v1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "ziba-production"}}},
			SecurityGroupSelectorTerms: []v1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "ziba-production"}}},
			BlockDeviceMappings: []*v1.BlockDeviceMapping{{
				DeviceName: new("/dev/xvda"),
				EBS: &v1.BlockDevice{
					VolumeSize:          &size,
					VolumeType:          new("gp3"),
					Encrypted:           new(true),
					DeleteOnTermination: new(true),
				},
			}},
			MetadataOptions: &v1.MetadataOptions{
				HTTPEndpoint:            new("enabled"),
				HTTPProtocolIPv6:        new("disabled"),
				HTTPPutResponseHopLimit: new(int64(1)),
				HTTPTokens:              new("required"),
			},
			Tags: map[string]string{"application": "ziba", "environment": "production", "owner": "platform"},
		},
	}
	if diff := cmp.Diff(want, nc, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("decoded seed (-want +got):\n%s", diff)
	}
	if got := nc.Spec.BlockDeviceMappings[0].EBS.VolumeSize.Value(); got != 80<<30 {
		t.Errorf("volumeSize = %d bytes, want %d", got, int64(80<<30))
	}
	if got := nc.AMIFamily(); got != v1.AMIFamilyAL2023 {
		t.Errorf("AMIFamily() = %q, want AL2023", got)
	}
	if diff := cmp.Diff(&v1.Alias{Family: "AL2023", Version: "latest"}, nc.Alias()); diff != "" {
		t.Errorf("Alias() (-want +got):\n%s", diff)
	}
	// The typed object survives the scheme (as a controller-runtime client would use it).
	s := runtime.NewScheme()
	if err := v1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	gvks, _, err := s.ObjectKinds(&nc)
	if err != nil || len(gvks) != 1 || gvks[0] != v1.GroupVersion.WithKind("EC2NodeClass") {
		t.Errorf("scheme kinds = %v, %v; want karpenter.k8s.aws/v1 EC2NodeClass", gvks, err)
	}
	if diff := cmp.Diff(&nc, nc.DeepCopy(), cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("DeepCopy differs (-orig +copy):\n%s", diff)
	}
}

func TestSeedValidates(t *testing.T) {
	v := newCRDValidator(t)
	obj := seedMap(t)
	if errs := v.validate(obj, nil); len(errs) > 0 {
		t.Fatalf("seed rejected: %v", errs.ToAggregate())
	}
	// An update with an unchanged spec passes the transition rules too.
	if errs := v.validate(seedMap(t), seedMap(t)); len(errs) > 0 {
		t.Fatalf("seed update rejected: %v", errs.ToAggregate())
	}
}

func TestMetadataOptionsDefaults(t *testing.T) {
	v := newCRDValidator(t)
	for _, tc := range []struct {
		name string
		set  any // value of spec.metadataOptions; nil deletes it
		want map[string]any
	}{
		{
			name: "omitted",
			want: map[string]any{"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled", "httpPutResponseHopLimit": int64(1), "httpTokens": "required"},
		},
		{
			name: "partly set",
			set:  map[string]any{"httpTokens": "optional", "httpPutResponseHopLimit": int64(2)},
			want: map[string]any{"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled", "httpPutResponseHopLimit": int64(2), "httpTokens": "optional"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := seedMap(t)
			spec := obj["spec"].(map[string]any)
			delete(spec, "metadataOptions")
			if tc.set != nil {
				spec["metadataOptions"] = tc.set
			}
			if errs := v.validate(obj, nil); len(errs) > 0 {
				t.Fatalf("rejected: %v", errs.ToAggregate())
			}
			got := spec["metadataOptions"]
			// JSON numbers come back as int64 or float64 depending on the decoder.
			if m, ok := got.(map[string]any); ok {
				if f, ok := m["httpPutResponseHopLimit"].(float64); ok {
					m["httpPutResponseHopLimit"] = int64(f)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("defaulted metadataOptions (-want +got):\n%s", diff)
			}
		})
	}
}

// wantErr is one expected API error: its field path, type and a part of its detail.
type wantErr struct {
	Field  string
	Type   field.ErrorType
	Detail string
}

func TestInvalid(t *testing.T) {
	v := newCRDValidator(t)
	spec := func(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }
	ebs := func(obj map[string]any) map[string]any {
		return spec(obj)["blockDeviceMappings"].([]any)[0].(map[string]any)["ebs"].(map[string]any)
	}
	for _, tc := range []struct {
		name   string
		mutate func(obj map[string]any)
		old    func(obj map[string]any) // when set, validate as an update from the mutated seed
		want   []wantErr
	}{
		{
			name:   "bad volumeType",
			mutate: func(o map[string]any) { ebs(o)["volumeType"] = "gp9" },
			want:   []wantErr{{"spec.blockDeviceMappings[0].ebs.volumeType", field.ErrorTypeNotSupported, `supported values: "standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"`}},
		},
		{
			name:   "volumeSize too large",
			mutate: func(o map[string]any) { ebs(o)["volumeSize"] = "80000Gi" },
			want:   []wantErr{{"spec.blockDeviceMappings[0].ebs.volumeSize", field.ErrorTypeInvalid, "should match"}},
		},
		{
			name:   "ebs without size or snapshot",
			mutate: func(o map[string]any) { delete(ebs(o), "volumeSize") },
			want:   []wantErr{{"spec.blockDeviceMappings[0].ebs", field.ErrorTypeInvalid, "snapshotID or volumeSize must be defined"}},
		},
		{
			name: "two root volumes",
			mutate: func(o map[string]any) {
				spec(o)["blockDeviceMappings"] = []any{
					map[string]any{"deviceName": "/dev/xvda", "rootVolume": true, "ebs": map[string]any{"volumeSize": "20Gi"}},
					map[string]any{"deviceName": "/dev/xvdb", "rootVolume": true, "ebs": map[string]any{"volumeSize": "20Gi"}},
				}
			},
			want: []wantErr{{"spec.blockDeviceMappings", field.ErrorTypeInvalid, "must have only one blockDeviceMappings with rootVolume"}},
		},
		{
			name:   "both role and instanceProfile",
			mutate: func(o map[string]any) { spec(o)["instanceProfile"] = "KarpenterNodeInstanceProfile" },
			want:   []wantErr{{"spec", field.ErrorTypeInvalid, "must specify exactly one of ['role', 'instanceProfile']"}},
		},
		{
			name:   "neither role nor instanceProfile",
			mutate: func(o map[string]any) { delete(spec(o), "role") },
			want:   []wantErr{{"spec", field.ErrorTypeInvalid, "must specify exactly one of ['role', 'instanceProfile']"}},
		},
		{
			name:   "empty role",
			mutate: func(o map[string]any) { spec(o)["role"] = "" },
			want:   []wantErr{{"spec.role", field.ErrorTypeInvalid, "role cannot be empty"}},
		},
		{
			name: "role to instanceProfile on update",
			mutate: func(o map[string]any) {
				delete(spec(o), "role")
				spec(o)["instanceProfile"] = "KarpenterNodeInstanceProfile"
			},
			old:  func(o map[string]any) {},
			want: []wantErr{{"spec", field.ErrorTypeInvalid, "changing from 'instanceProfile' to 'role' is not supported"}},
		},
		{
			name:   "missing subnetSelectorTerms",
			mutate: func(o map[string]any) { delete(spec(o), "subnetSelectorTerms") },
			want:   []wantErr{{"spec.subnetSelectorTerms", field.ErrorTypeRequired, "Required value"}},
		},
		{
			name:   "empty subnetSelectorTerms",
			mutate: func(o map[string]any) { spec(o)["subnetSelectorTerms"] = []any{} },
			want:   []wantErr{{"spec.subnetSelectorTerms", field.ErrorTypeInvalid, "subnetSelectorTerms cannot be empty"}},
		},
		{
			name:   "subnet term with nothing to select on",
			mutate: func(o map[string]any) { spec(o)["subnetSelectorTerms"] = []any{map[string]any{}} },
			want:   []wantErr{{"spec.subnetSelectorTerms", field.ErrorTypeInvalid, "expected at least one, got none, ['tags', 'id']"}},
		},
		{
			name:   "bad subnet id",
			mutate: func(o map[string]any) { spec(o)["subnetSelectorTerms"] = []any{map[string]any{"id": "sn-123"}} },
			want:   []wantErr{{"spec.subnetSelectorTerms[0].id", field.ErrorTypeInvalid, "should match 'subnet-[0-9a-z]+'"}},
		},
		{
			name: "empty tag value in subnet term",
			mutate: func(o map[string]any) {
				spec(o)["subnetSelectorTerms"] = []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": ""}}}
			},
			want: []wantErr{{"spec.subnetSelectorTerms[0].tags", field.ErrorTypeInvalid, "empty tag keys or values aren't supported"}},
		},
		{
			name: "security group id with name",
			mutate: func(o map[string]any) {
				spec(o)["securityGroupSelectorTerms"] = []any{map[string]any{"id": "sg-0123", "name": "nodes"}}
			},
			want: []wantErr{
				{"spec.securityGroupSelectorTerms", field.ErrorTypeInvalid, "'id' is mutually exclusive"},
				{"spec.securityGroupSelectorTerms", field.ErrorTypeInvalid, "'name' is mutually exclusive"},
			},
		},
		{
			name:   "bad httpTokens",
			mutate: func(o map[string]any) { spec(o)["metadataOptions"].(map[string]any)["httpTokens"] = "sometimes" },
			want:   []wantErr{{"spec.metadataOptions.httpTokens", field.ErrorTypeNotSupported, `supported values: "required", "optional"`}},
		},
		{
			name: "hop limit out of range",
			mutate: func(o map[string]any) {
				spec(o)["metadataOptions"].(map[string]any)["httpPutResponseHopLimit"] = int64(65)
			},
			want: []wantErr{{"spec.metadataOptions.httpPutResponseHopLimit", field.ErrorTypeInvalid, "should be less than or equal to 64"}},
		},
		{
			name: "alias with id in the same term",
			mutate: func(o map[string]any) {
				spec(o)["amiSelectorTerms"] = []any{map[string]any{"alias": "al2023@latest", "id": "ami-0123"}}
			},
			want: []wantErr{
				{"spec.amiSelectorTerms", field.ErrorTypeInvalid, "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms"},
				{"spec.amiSelectorTerms", field.ErrorTypeInvalid, "'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms"},
			},
		},
		{
			name: "alias beside another term",
			mutate: func(o map[string]any) {
				spec(o)["amiSelectorTerms"] = []any{map[string]any{"alias": "al2023@latest"}, map[string]any{"id": "ami-0123"}}
			},
			want: []wantErr{{"spec.amiSelectorTerms", field.ErrorTypeInvalid, "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms"}},
		},
		{
			name:   "alias without version",
			mutate: func(o map[string]any) { spec(o)["amiSelectorTerms"] = []any{map[string]any{"alias": "al2023"}} },
			want: []wantErr{
				{"spec.amiSelectorTerms[0].alias", field.ErrorTypeInvalid, "'alias' is improperly formatted, must match the format 'family@version'"},
			},
		},
		{
			name:   "alias of unknown family",
			mutate: func(o map[string]any) { spec(o)["amiSelectorTerms"] = []any{map[string]any{"alias": "ubuntu@latest"}} },
			want:   []wantErr{{"spec.amiSelectorTerms[0].alias", field.ErrorTypeInvalid, "family is not supported"}},
		},
		{
			name:   "pinned windows alias",
			mutate: func(o map[string]any) { spec(o)["amiSelectorTerms"] = []any{map[string]any{"alias": "windows2022@v1"}} },
			want:   []wantErr{{"spec.amiSelectorTerms[0].alias", field.ErrorTypeInvalid, "windows families may only specify version 'latest'"}},
		},
		{
			name:   "no amiSelectorTerms",
			mutate: func(o map[string]any) { spec(o)["amiSelectorTerms"] = []any{} },
			want:   []wantErr{{"spec.amiSelectorTerms", field.ErrorTypeInvalid, "should have at least 1 items"}},
		},
		{
			name:   "amiFamily not matching the alias",
			mutate: func(o map[string]any) { spec(o)["amiFamily"] = "Bottlerocket" },
			want:   []wantErr{{"spec", field.ErrorTypeInvalid, "if set, amiFamily must be 'AL2023' or 'Custom' when using an AL2023 alias"}},
		},
		{
			name:   "id terms without amiFamily",
			mutate: func(o map[string]any) { spec(o)["amiSelectorTerms"] = []any{map[string]any{"id": "ami-0123"}} },
			want:   []wantErr{{"spec", field.ErrorTypeInvalid, "must specify amiFamily if amiSelectorTerms does not contain an alias"}},
		},
		{
			name:   "unknown amiFamily",
			mutate: func(o map[string]any) { spec(o)["amiFamily"] = "Ubuntu" },
			want:   []wantErr{{"spec.amiFamily", field.ErrorTypeNotSupported, "supported values"}},
		},
		{
			name:   "restricted tag",
			mutate: func(o map[string]any) { spec(o)["tags"].(map[string]any)["kubernetes.io/cluster/karplab"] = "owned" },
			want:   []wantErr{{"spec.tags", field.ErrorTypeInvalid, "tag contains a restricted tag matching kubernetes.io/cluster/"}},
		},
		{
			name: "bad kubelet reserved key",
			mutate: func(o map[string]any) {
				spec(o)["kubelet"] = map[string]any{"systemReserved": map[string]any{"gpu": "1"}}
			},
			want: []wantErr{{"spec.kubelet.systemReserved", field.ErrorTypeInvalid, "valid keys for systemReserved are ['cpu','memory','ephemeral-storage','pid']"}},
		},
		{
			name: "image GC thresholds inverted",
			mutate: func(o map[string]any) {
				spec(o)["kubelet"] = map[string]any{"imageGCHighThresholdPercent": int64(50), "imageGCLowThresholdPercent": int64(60)}
			},
			want: []wantErr{{"spec.kubelet", field.ErrorTypeInvalid, "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent"}},
		},
		{
			name:   "negative maxPods",
			mutate: func(o map[string]any) { spec(o)["kubelet"] = map[string]any{"maxPods": int64(-1)} },
			want:   []wantErr{{"spec.kubelet.maxPods", field.ErrorTypeInvalid, "should be greater than or equal to 0"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := seedMap(t)
			var old map[string]any
			if tc.old != nil {
				old = seedMap(t)
				tc.old(old)
			}
			tc.mutate(obj)
			errs := v.validate(obj, old)
			// Paths and types compare exactly, details by substring.
			var got []wantErr
			for i, e := range errs {
				detail := e.Error()
				if i < len(tc.want) && strings.Contains(detail, tc.want[i].Detail) {
					detail = tc.want[i].Detail
				}
				got = append(got, wantErr{Field: e.Field, Type: e.Type, Detail: detail})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

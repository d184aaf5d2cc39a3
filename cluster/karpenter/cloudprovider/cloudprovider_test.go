package cloudprovider_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	corecloudprovider "sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/karplab/karplab/cluster/bootstrap"
	apisv1 "github.com/karplab/karplab/cluster/karpenter/apis/v1"
	"github.com/karplab/karplab/cluster/karpenter/cloudprovider"
	"github.com/karplab/karplab/cluster/karpenter/nodeclass"
	"github.com/karplab/karplab/fakeec2"
)

// lab is the emulator behind a real listener, the real SDK client pointed at it, and the
// provider wired to both, with the seed's NodePool and EC2NodeClass (status resolved
// against the emulator by the nodeclass resolver).
type lab struct {
	srv      *fakeec2.Server
	ec2      *ec2.Client
	kube     client.Client
	cp       *cloudprovider.CloudProvider
	nodePool *karpv1.NodePool
	class    *apisv1.EC2NodeClass
}

func newLab(t *testing.T) *lab {
	t.Helper()
	// State on disk, as the lab keeps it.
	srv, err := fakeec2.New(fakeec2.Options{StateDir: t.TempDir(), BootDelay: -1, ShutdownDelay: -1})
	if err != nil {
		t.Fatalf("fakeec2.New: %v", err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	api := ec2.New(ec2.Options{
		Region:       "eu-west-2",
		BaseEndpoint: aws.String(hs.URL),
		HTTPClient:   fakeec2.NewHTTPClient(),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIAKARPENTER", "secret", ""),
	})

	np, class := seed(t)
	if err := nodeclass.NewResolver(api, nodeclass.ResolverOptions{ClusterName: "karplab", Region: "eu-west-2"}).Resolve(context.Background(), class); err != nil {
		t.Fatalf("resolving the seed EC2NodeClass: %v", err)
	}
	nodeclass.SetHashAnnotations(class)
	// Karpenter's APIs register themselves in client-go's scheme; the EC2NodeClass API
	// leaves that to its user (the real provider's type may hold the kind there).
	scheme := clientgoscheme.Scheme
	if err := apisv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	// The provider only reads NodePools and EC2NodeClasses here; the end-to-end tests in
	// package karpenter run it against a real API server.
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(np, class).
		WithStatusSubresource(&karpv1.NodeClaim{}).Build()
	cp := cloudprovider.New(kube, api, cloudprovider.Options{
		ClusterName:     "karplab",
		ClusterEndpoint: "https://127.0.0.1:6443",
		ClusterCA:       []byte("ca"),
		OnDemandPrice: func(name string) (float64, bool) {
			it, ok := fakeec2.LookupInstanceType(name)
			return it.OnDemandPrice, ok
		},
	})
	return &lab{srv: srv, ec2: api, kube: kube, cp: cp, nodePool: np, class: class}
}

// seed decodes the course's NodePool and EC2NodeClass, verbatim.
func seed(t *testing.T) (*karpv1.NodePool, *apisv1.EC2NodeClass) {
	t.Helper()
	b, err := os.ReadFile("../testdata/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	np, class := &karpv1.NodePool{}, &apisv1.EC2NodeClass{}
	if err := dec.Decode(np); err != nil {
		t.Fatalf("decoding NodePool: %v", err)
	}
	if err := dec.Decode(class); err != nil {
		t.Fatalf("decoding EC2NodeClass: %v", err)
	}
	// What the API server's CRD defaults would add.
	if class.Spec.MetadataOptions == nil {
		t.Fatal("seed EC2NodeClass lost its metadataOptions")
	}
	class.Status.Conditions = nil
	return np, class
}

// nodeClaim is what Karpenter's provisioner creates for the seed NodePool: its template
// labels, its requirements plus the instance types it chose, and the pods' requests.
func (l *lab) nodeClaim(name string, requests corev1.ResourceList, extra ...karpv1.NodeSelectorRequirementWithMinValues) *karpv1.NodeClaim {
	labels := map[string]string{karpv1.NodePoolLabelKey: l.nodePool.Name}
	for k, v := range l.nodePool.Spec.Template.Labels {
		labels[k] = v
	}
	return &karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: karpv1.NodeClaimSpec{
			Requirements: append(append([]karpv1.NodeSelectorRequirementWithMinValues{}, l.nodePool.Spec.Template.Spec.Requirements...), extra...),
			Resources:    karpv1.ResourceRequirements{Requests: requests},
			NodeClassRef: l.nodePool.Spec.Template.Spec.NodeClassRef,
		},
	}
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) karpv1.NodeSelectorRequirementWithMinValues {
	return karpv1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values}
}

type offering struct {
	Zone, CapacityType string
	Price              float64
	Available          bool
}

type typeSummary struct {
	Labels    map[string]string
	Offerings []offering
	Capacity  map[string]string
}

func summarize(it *corecloudprovider.InstanceType, keys ...string) typeSummary {
	s := typeSummary{Labels: map[string]string{}, Capacity: map[string]string{}}
	for _, k := range keys {
		r := it.Requirements.Get(k)
		vals := r.Values()
		sort.Strings(vals)
		s.Labels[k] = string(r.Operator()) + " " + strings.Join(vals, ",")
	}
	for _, o := range it.Offerings {
		s.Offerings = append(s.Offerings, offering{o.Zone(), o.CapacityType(), o.Price, o.Available})
	}
	sort.Slice(s.Offerings, func(i, j int) bool {
		a, b := s.Offerings[i], s.Offerings[j]
		return a.Zone+a.CapacityType < b.Zone+b.CapacityType
	})
	alloc := it.Allocatable()
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage} {
		c, a := it.Capacity[r], alloc[r]
		s.Capacity[string(r)] = c.String() + " / " + a.String()
	}
	return s
}

func TestGetInstanceTypes(t *testing.T) {
	l := newLab(t)
	its, err := l.cp.GetInstanceTypes(context.Background(), l.nodePool)
	if err != nil {
		t.Fatalf("GetInstanceTypes: %v", err)
	}
	if got, want := len(its), len(fakeec2.InstanceTypes()); got != want {
		t.Errorf("GetInstanceTypes returned %d types, want the emulator's %d", got, want)
	}
	byName := map[string]*corecloudprovider.InstanceType{}
	for _, it := range its {
		byName[it.Name] = it
	}
	keys := []string{
		corev1.LabelInstanceTypeStable, corev1.LabelArchStable, corev1.LabelOSStable, corev1.LabelTopologyZone,
		karpv1.CapacityTypeLabelKey, apisv1.LabelInstanceCategory, apisv1.LabelInstanceFamily,
		apisv1.LabelInstanceGeneration, apisv1.LabelInstanceSize, apisv1.LabelInstanceCPU, apisv1.LabelInstanceMemory,
		apisv1.LabelInstanceCPUManufacturer, apisv1.LabelInstanceGPUCount,
	}
	zones := []string{"eu-west-2a", "eu-west-2b", "eu-west-2c"}
	offerings := func(name string) []offering {
		it, _ := fakeec2.LookupInstanceType(name)
		var out []offering
		for _, z := range zones {
			out = append(out, offering{z, "on-demand", it.OnDemandPrice, true}, offering{z, "spot", fakeec2.SpotPrice(&it, z), true})
		}
		return out
	}
	tests := []struct {
		name string
		want typeSummary
	}{
		{name: "m6i.large", want: typeSummary{
			Labels: map[string]string{
				corev1.LabelInstanceTypeStable: "In m6i.large", corev1.LabelArchStable: "In amd64", corev1.LabelOSStable: "In linux",
				corev1.LabelTopologyZone: "In eu-west-2a,eu-west-2b,eu-west-2c", karpv1.CapacityTypeLabelKey: "In on-demand,spot",
				apisv1.LabelInstanceCategory: "In m", apisv1.LabelInstanceFamily: "In m6i", apisv1.LabelInstanceGeneration: "In 6",
				apisv1.LabelInstanceSize: "In large", apisv1.LabelInstanceCPU: "In 2", apisv1.LabelInstanceMemory: "In 8192",
				apisv1.LabelInstanceCPUManufacturer: "In intel", apisv1.LabelInstanceGPUCount: "DoesNotExist ",
			},
			Offerings: offerings("m6i.large"),
			// 8192Mi less 7.5% VM overhead; 29 pods (3 ENIs x 9 + 2); the seed's 80Gi root volume.
			Capacity: map[string]string{"cpu": "2 / 1930m", "memory": "7577Mi / 6903Mi", "pods": "29 / 29", "ephemeral-storage": "80Gi / 71Gi"},
		}},
		{name: "c7g.xlarge", want: typeSummary{
			Labels: map[string]string{
				corev1.LabelInstanceTypeStable: "In c7g.xlarge", corev1.LabelArchStable: "In arm64", corev1.LabelOSStable: "In linux",
				corev1.LabelTopologyZone: "In eu-west-2a,eu-west-2b,eu-west-2c", karpv1.CapacityTypeLabelKey: "In on-demand,spot",
				apisv1.LabelInstanceCategory: "In c", apisv1.LabelInstanceFamily: "In c7g", apisv1.LabelInstanceGeneration: "In 7",
				apisv1.LabelInstanceSize: "In xlarge", apisv1.LabelInstanceCPU: "In 4", apisv1.LabelInstanceMemory: "In 8192",
				apisv1.LabelInstanceCPUManufacturer: "In aws", apisv1.LabelInstanceGPUCount: "DoesNotExist ",
			},
			Offerings: offerings("c7g.xlarge"),
			// Graviton keeps 64Mi more; 58 pods (4 x 14 + 2).
			Capacity: map[string]string{"cpu": "4 / 3920m", "memory": "7518Mi / 6525Mi", "pods": "58 / 58", "ephemeral-storage": "80Gi / 71Gi"},
		}},
		{name: "r5.8xlarge", want: typeSummary{
			Labels: map[string]string{
				corev1.LabelInstanceTypeStable: "In r5.8xlarge", corev1.LabelArchStable: "In amd64", corev1.LabelOSStable: "In linux",
				corev1.LabelTopologyZone: "In eu-west-2a,eu-west-2b,eu-west-2c", karpv1.CapacityTypeLabelKey: "In on-demand,spot",
				apisv1.LabelInstanceCategory: "In r", apisv1.LabelInstanceFamily: "In r5", apisv1.LabelInstanceGeneration: "In 5",
				apisv1.LabelInstanceSize: "In 8xlarge", apisv1.LabelInstanceCPU: "In 32", apisv1.LabelInstanceMemory: "In 262144",
				apisv1.LabelInstanceCPUManufacturer: "In intel", apisv1.LabelInstanceGPUCount: "DoesNotExist ",
			},
			Offerings: offerings("r5.8xlarge"),
			Capacity:  map[string]string{"cpu": "32 / 31850m", "memory": "242483Mi / 239554Mi", "pods": "234 / 234", "ephemeral-storage": "80Gi / 71Gi"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it, ok := byName[tt.name]
			if !ok {
				t.Fatalf("no instance type %s", tt.name)
			}
			if diff := cmp.Diff(tt.want, summarize(it, keys...)); diff != "" {
				t.Errorf("instance type (-want +got):\n%s", diff)
			}
		})
	}

	// The seed NodePool's requirements admit the c/m/r types of generation 6 and 7 only.
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(l.nodePool.Spec.Template.Spec.Requirements...)
	var admitted []string
	for _, it := range its {
		if reqs.Compatible(it.Requirements, scheduling.AllowUndefinedWellKnownLabels) == nil {
			admitted = append(admitted, it.Name)
		}
	}
	for _, name := range admitted {
		if gen := strings.TrimLeft(strings.Split(name, ".")[0], "cmr"); gen[0] < '6' {
			t.Errorf("seed NodePool admits %s, generation not > 5", name)
		}
	}
	if len(admitted) == 0 || len(admitted) == len(its) {
		t.Errorf("seed NodePool admits %d of %d types, want some but not all", len(admitted), len(its))
	}
}

// requestsFor is one ziba-render-worker pod's requests: too big for a large, fits an xlarge.
var requestsFor = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("1"),
	corev1.ResourceMemory: resource.MustParse("6Gi"),
	corev1.ResourcePods:   resource.MustParse("1"),
}

func tagMap(tags []ec2types.Tag) map[string]string {
	m := map[string]string{}
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

func (l *lab) describe(t *testing.T, id string) ec2types.Instance {
	t.Helper()
	out, err := l.ec2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil || len(out.Reservations) != 1 || len(out.Reservations[0].Instances) != 1 {
		t.Fatalf("DescribeInstances %s: %v %+v", id, err, out)
	}
	return out.Reservations[0].Instances[0]
}

func TestCreate(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	nc := l.nodeClaim("ziba-general-abcde", requestsFor)
	got, err := l.cp.Create(ctx, nc)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	id, err := cloudprovider.ParseInstanceID(got.Status.ProviderID)
	if err != nil {
		t.Fatalf("provider ID: %v", err)
	}
	zone := got.Labels[corev1.LabelTopologyZone]
	if want := "aws:///" + zone + "/" + id; got.Status.ProviderID != want {
		t.Errorf("provider ID %q, want %q", got.Status.ProviderID, want)
	}
	itName := got.Labels[corev1.LabelInstanceTypeStable]
	// Spot is preferred when the NodePool allows it; the cheapest fitting offering wins.
	if ct := got.Labels[karpv1.CapacityTypeLabelKey]; ct != karpv1.CapacityTypeSpot {
		t.Errorf("capacity type %q, want spot", ct)
	}
	for _, k := range []string{apisv1.LabelInstanceCategory, apisv1.LabelInstanceGeneration, corev1.LabelArchStable, karpv1.NodePoolLabelKey} {
		if got.Labels[k] == "" {
			t.Errorf("hydrated NodeClaim has no %s label: %v", k, got.Labels)
		}
	}
	if mem := got.Status.Allocatable[corev1.ResourceMemory]; mem.Cmp(resource.MustParse("6Gi")) < 0 {
		t.Errorf("launched %s with allocatable memory %s < the 6Gi asked", itName, mem.String())
	}
	if got.Annotations[apisv1.AnnotationEC2NodeClassHash] != l.class.Hash() {
		t.Errorf("hash annotation %q, want %q", got.Annotations[apisv1.AnnotationEC2NodeClassHash], l.class.Hash())
	}

	// One CreateFleet: instant, one spot instance, overrides over the compatible types in
	// the three subnets, tags for instance, volume and fleet.
	fleets := l.srv.Audit(fakeec2.AuditQuery{Action: "CreateFleet"})
	if len(fleets) != 1 {
		t.Fatalf("%d CreateFleet calls, want 1", len(fleets))
	}
	p := fleets[0].Parameters
	for k, want := range map[string]string{
		"Type": "instant",
		"TargetCapacitySpecification.DefaultTargetCapacityType": "spot",
		"TargetCapacitySpecification.TotalTargetCapacity":       "1",
		"SpotOptions.AllocationStrategy":                        "price-capacity-optimized",
		"TagSpecification.1.ResourceType":                       "instance",
		"TagSpecification.2.ResourceType":                       "volume",
		"TagSpecification.3.ResourceType":                       "fleet",
	} {
		if p[k] != want {
			t.Errorf("CreateFleet %s = %q, want %q", k, p[k], want)
		}
	}
	subnets := map[string]string{}
	for _, s := range l.class.Status.Subnets {
		subnets[s.ID] = s.Zone
	}
	overrides := 0
	for k, v := range p {
		if strings.HasSuffix(k, ".InstanceType") && strings.Contains(k, "Overrides") {
			overrides++
			if !strings.HasPrefix(v, "c") && !strings.HasPrefix(v, "m") && !strings.HasPrefix(v, "r") || v[1] < '6' {
				t.Errorf("override %s=%s is not a c/m/r type of generation > 5", k, v)
			}
		}
		if strings.HasSuffix(k, ".SubnetId") {
			if _, ok := subnets[v]; !ok {
				t.Errorf("override %s=%s is not an EC2NodeClass subnet", k, v)
			}
		}
	}
	if overrides < 10 {
		t.Errorf("CreateFleet has %d overrides, want every compatible type x zone", overrides)
	}

	inst := l.describe(t, id)
	wantTags := map[string]string{
		"karpenter.sh/nodepool":          "ziba-general",
		"karpenter.sh/nodeclaim":         nc.Name,
		"karpenter.k8s.aws/ec2nodeclass": "ziba-general",
		"kubernetes.io/cluster/karplab":  "owned",
		"eks:eks-cluster-name":           "karplab",
		"application":                    "ziba",
		"environment":                    "production",
		"owner":                          "platform",
	}
	if diff := cmp.Diff(wantTags, tagMap(inst.Tags)); diff != "" {
		t.Errorf("instance tags (-want +got):\n%s", diff)
	}
	if z, ok := subnets[aws.ToString(inst.SubnetId)]; !ok || z != zone {
		t.Errorf("instance subnet %s (zone %q), want an EC2NodeClass subnet in %s", aws.ToString(inst.SubnetId), z, zone)
	}
	if inst.InstanceLifecycle != ec2types.InstanceLifecycleTypeSpot {
		t.Errorf("instance lifecycle %q, want spot", inst.InstanceLifecycle)
	}
	if m := inst.MetadataOptions; m == nil || m.HttpTokens != ec2types.HttpTokensStateRequired || aws.ToInt32(m.HttpPutResponseHopLimit) != 1 {
		t.Errorf("metadata options %+v, want IMDSv2 required, hop limit 1", m)
	}
	var sgs []string
	for _, g := range inst.SecurityGroups {
		sgs = append(sgs, aws.ToString(g.GroupId))
	}
	if len(sgs) != len(l.class.Status.SecurityGroups) || sgs[0] != l.class.Status.SecurityGroups[0].ID {
		t.Errorf("instance security groups %v, want the EC2NodeClass's %v", sgs, l.class.Status.SecurityGroups)
	}

	// The seed's root volume: encrypted gp3, 80 GiB, deleted with the instance.
	if len(inst.BlockDeviceMappings) != 1 || aws.ToString(inst.BlockDeviceMappings[0].DeviceName) != "/dev/xvda" ||
		!aws.ToBool(inst.BlockDeviceMappings[0].Ebs.DeleteOnTermination) {
		t.Fatalf("block device mappings %+v, want /dev/xvda with DeleteOnTermination", inst.BlockDeviceMappings)
	}
	vols, err := l.ec2.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{Filters: []ec2types.Filter{{Name: aws.String("attachment.instance-id"), Values: []string{id}}}})
	if err != nil || len(vols.Volumes) != 1 {
		t.Fatalf("DescribeVolumes: %v, %d volumes", err, len(vols.Volumes))
	}
	v := vols.Volumes[0]
	if v.VolumeType != ec2types.VolumeTypeGp3 || aws.ToInt32(v.Size) != 80 || !aws.ToBool(v.Encrypted) {
		t.Errorf("root volume %s %d GiB encrypted=%v, want gp3 80 GiB encrypted", v.VolumeType, aws.ToInt32(v.Size), aws.ToBool(v.Encrypted))
	}
	if tagMap(v.Tags)["karpenter.sh/nodeclaim"] != nc.Name || tagMap(v.Tags)["application"] != "ziba" {
		t.Errorf("volume tags %v lack the NodeClaim and cost tags", tagMap(v.Tags))
	}
	enis, err := l.ec2.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{Filters: []ec2types.Filter{{Name: aws.String("attachment.instance-id"), Values: []string{id}}}})
	if err != nil || len(enis.NetworkInterfaces) != 1 {
		t.Fatalf("DescribeNetworkInterfaces: %v, %d interfaces", err, len(enis.NetworkInterfaces))
	}
	eniTags := tagMap(enis.NetworkInterfaces[0].TagSet)
	for _, k := range []string{"karpenter.sh/nodepool", "karpenter.k8s.aws/ec2nodeclass", "kubernetes.io/cluster/karplab", "application", "environment", "owner"} {
		if eniTags[k] != wantTags[k] {
			t.Errorf("ENI tag %s = %q, want %q (all: %v)", k, eniTags[k], wantTags[k], eniTags)
		}
	}

	// User data parses back to the NodeClaim's labels and taints, and the type's max pods.
	attr, err := l.ec2.DescribeInstanceAttribute(ctx, &ec2.DescribeInstanceAttributeInput{InstanceId: aws.String(id), Attribute: ec2types.InstanceAttributeNameUserData})
	if err != nil || attr.UserData == nil {
		t.Fatalf("DescribeInstanceAttribute userData: %v", err)
	}
	raw, err := base64.StdEncoding.DecodeString(aws.ToString(attr.UserData.Value))
	if err != nil {
		t.Fatalf("user data is not base64: %v", err)
	}
	ud, err := bootstrap.Parse(string(raw))
	if err != nil {
		t.Fatalf("bootstrap.Parse: %v\n%s", err, raw)
	}
	wantLabels := map[string]string{"karpenter.sh/capacity-type": "spot"}
	for k, v := range nc.Labels {
		wantLabels[k] = v
	}
	maxPods := int32(got.Status.Capacity.Pods().Value())
	want := bootstrap.Node{
		ClusterName: "karplab", APIServerEndpoint: "https://127.0.0.1:6443", CertificateAuthority: []byte("ca"),
		MaxPods: &maxPods, Labels: wantLabels,
		Taints: []corev1.Taint{{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute}},
	}
	if diff := cmp.Diff(want, ud.Node); diff != "" {
		t.Errorf("user data (-want +got):\n%s", diff)
	}

	// The launch template is named and tagged like the real provider's, and reused.
	lts, err := l.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, lt := range lts.LaunchTemplates {
		if !strings.HasPrefix(aws.ToString(lt.LaunchTemplateName), "karpenter.k8s.aws/") || tagMap(lt.Tags)["karpenter.k8s.aws/cluster"] != "karplab" {
			t.Errorf("launch template %s tags %v", aws.ToString(lt.LaunchTemplateName), tagMap(lt.Tags))
		}
	}
	if _, err := l.cp.Create(ctx, l.nodeClaim("ziba-general-fghij", requestsFor)); err != nil {
		t.Fatalf("second Create: %v", err)
	}
	if n := len(l.srv.Audit(fakeec2.AuditQuery{Action: "CreateLaunchTemplate"})); n != len(lts.LaunchTemplates) {
		t.Errorf("%d CreateLaunchTemplate calls after two launches, want %d (templates reused)", n, len(lts.LaunchTemplates))
	}
}

func TestCreateInsufficientCapacity(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	onDemandIn2a := func(types ...string) []karpv1.NodeSelectorRequirementWithMinValues {
		return []karpv1.NodeSelectorRequirementWithMinValues{
			req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "on-demand"),
			req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "eu-west-2a"),
			req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, types...),
		}
	}
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	// m6g.large is the cheaper of the two: EC2 has none, so the fleet falls to m6i.large.
	if _, err := l.srv.SetFault(fakeec2.Fault{Kind: fakeec2.FaultInsufficientCapacity, InstanceType: "m6g.large", Zone: "eu-west-2a", CapacityType: "on-demand"}); err != nil {
		t.Fatal(err)
	}
	got, err := l.cp.Create(ctx, l.nodeClaim("ice-1", small, onDemandIn2a("m6g.large", "m6i.large")...))
	if err != nil {
		t.Fatalf("Create with one type out of capacity: %v", err)
	}
	if it := got.Labels[corev1.LabelInstanceTypeStable]; it != "m6i.large" {
		t.Errorf("launched %s, want m6i.large (m6g.large has no capacity)", it)
	}
	// The ICE marked that offering unavailable for Karpenter's next scheduling round.
	its, err := l.cp.GetInstanceTypes(ctx, l.nodePool)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range its {
		for _, o := range it.Offerings {
			wantAvailable := !(it.Name == "m6g.large" && o.Zone() == "eu-west-2a" && o.CapacityType() == "on-demand")
			if o.Available != wantAvailable {
				t.Errorf("%s %s %s available=%v, want %v", it.Name, o.Zone(), o.CapacityType(), o.Available, wantAvailable)
			}
		}
	}
	fleetsBefore := len(l.srv.Audit(fakeec2.AuditQuery{Action: "CreateFleet"}))
	// Only the unavailable offering allowed: no EC2 call, InsufficientCapacityError.
	_, err = l.cp.Create(ctx, l.nodeClaim("ice-2", small, onDemandIn2a("m6g.large")...))
	if !corecloudprovider.IsInsufficientCapacityError(err) {
		t.Errorf("Create of an unavailable offering: %v, want InsufficientCapacityError", err)
	}
	if n := len(l.srv.Audit(fakeec2.AuditQuery{Action: "CreateFleet"})); n != fleetsBefore {
		t.Errorf("%d CreateFleet calls for an offering known unavailable, want none", n-fleetsBefore)
	}
	// Every override out of capacity: the fleet's Errors[] become InsufficientCapacityError.
	if _, err := l.srv.SetFault(fakeec2.Fault{Kind: fakeec2.FaultInsufficientCapacity, InstanceType: "m7g.large", Zone: "eu-west-2a"}); err != nil {
		t.Fatal(err)
	}
	_, err = l.cp.Create(ctx, l.nodeClaim("ice-3", small, onDemandIn2a("m7g.large")...))
	if !corecloudprovider.IsInsufficientCapacityError(err) {
		t.Errorf("Create with every offering out of capacity: %v, want InsufficientCapacityError", err)
	}
}

func TestCreateErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("UnauthorizedOperation is a CreateError with reason Unauthorized", func(t *testing.T) {
		l := newLab(t)
		if err := l.srv.SetPolicy(fakeec2.Policy{Statements: []fakeec2.PolicyStatement{{Sid: "no-fleets", DenyActions: []string{"CreateFleet"}}}}); err != nil {
			t.Fatal(err)
		}
		_, err := l.cp.Create(ctx, l.nodeClaim("denied", requestsFor))
		var ce *corecloudprovider.CreateError
		if !errors.As(err, &ce) || ce.ConditionReason != "Unauthorized" || !strings.Contains(err.Error(), "UnauthorizedOperation") {
			t.Fatalf("Create under a deny policy: %v, want a CreateError with reason Unauthorized", err)
		}
		if n := len(l.srv.Audit(fakeec2.AuditQuery{ErrorCode: "UnauthorizedOperation"})); n != 1 {
			t.Errorf("%d denied calls in the audit trail, want 1", n)
		}
	})
	t.Run("a NodeClass that is not Ready is NodeClassNotReadyError", func(t *testing.T) {
		l := newLab(t)
		class := l.class.DeepCopy()
		class.Status.Subnets = nil
		class.StatusConditions().SetFalse(apisv1.ConditionTypeSubnetsReady, "SubnetsNotFound", "SubnetSelector did not match any Subnets")
		if err := l.kube.Update(ctx, class); err != nil {
			t.Fatal(err)
		}
		_, err := l.cp.Create(ctx, l.nodeClaim("not-ready", requestsFor))
		if !corecloudprovider.IsNodeClassNotReadyError(err) || !strings.Contains(err.Error(), "SubnetsReady") {
			t.Errorf("Create with a NodeClass not Ready: %v, want NodeClassNotReadyError naming SubnetsReady", err)
		}
	})
	t.Run("a missing NodeClass is InsufficientCapacityError", func(t *testing.T) {
		l := newLab(t)
		nc := l.nodeClaim("orphan", requestsFor)
		nc.Spec.NodeClassRef = &karpv1.NodeClassReference{Group: apisv1.Group, Kind: "EC2NodeClass", Name: "gone"}
		if _, err := l.cp.Create(ctx, nc); !corecloudprovider.IsInsufficientCapacityError(err) {
			t.Errorf("Create with a missing NodeClass: %v, want InsufficientCapacityError", err)
		}
	})
}

func TestDeleteGet(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	created, err := l.cp.Create(ctx, l.nodeClaim("to-delete", requestsFor))
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.cp.Get(ctx, created.Status.ProviderID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.Labels[corev1.LabelInstanceTypeStable] != created.Labels[corev1.LabelInstanceTypeStable] || got.Status.Allocatable.Memory().IsZero() {
		t.Errorf("Get = %v %v, want the launched type with its resources", got.Labels, got.Status.Allocatable)
	}
	if err := l.cp.Delete(ctx, created); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	// Karpenter calls Delete until it answers NodeClaimNotFound.
	deadline := time.Now().Add(10 * time.Second)
	for err = l.cp.Delete(ctx, created); err == nil && time.Now().Before(deadline); err = l.cp.Delete(ctx, created) {
		time.Sleep(100 * time.Millisecond)
	}
	if !corecloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("Delete of a terminated instance: %v, want NodeClaimNotFoundError", err)
	}
	if _, err := l.cp.Get(ctx, created.Status.ProviderID); !corecloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("Get of a terminated instance: %v, want NodeClaimNotFoundError", err)
	}
	id, _ := cloudprovider.ParseInstanceID(created.Status.ProviderID)
	if n := len(l.srv.Audit(fakeec2.AuditQuery{Action: "TerminateInstances", ResourceID: id})); n != 1 {
		t.Errorf("%d TerminateInstances calls for %s, want 1", n, id)
	}
	vols, err := l.ec2.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{Filters: []ec2types.Filter{{Name: aws.String("tag:karpenter.sh/nodeclaim"), Values: []string{"to-delete"}}}})
	if err != nil || len(vols.Volumes) != 0 {
		t.Errorf("volumes after termination: %v %d, want none (DeleteOnTermination)", err, len(vols.Volumes))
	}
}

func TestListAndGarbageCollect(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	owned, err := l.cp.Create(ctx, l.nodeClaim("owned", requestsFor))
	if err != nil {
		t.Fatal(err)
	}
	ownedClaim := l.nodeClaim("owned", requestsFor)
	ownedClaim.Status.ProviderID = owned.Status.ProviderID
	if err := l.kube.Create(ctx, ownedClaim); err != nil {
		t.Fatal(err)
	}
	// A leak: an instance tagged for the cluster and a NodePool that no NodeClaim names
	// (launched by hand here; in life, Karpenter died between CreateFleet and its status write).
	run, err := l.ec2.RunInstances(ctx, &ec2.RunInstancesInput{
		ImageId: aws.String(l.class.Status.AMIs[0].ID), InstanceType: ec2types.InstanceTypeM6iLarge,
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: aws.String(l.class.Status.Subnets[0].ID),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: []ec2types.Tag{
			{Key: aws.String("kubernetes.io/cluster/karplab"), Value: aws.String("owned")},
			{Key: aws.String("karpenter.sh/nodepool"), Value: aws.String("ziba-general")},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	leaked := aws.ToString(run.Instances[0].InstanceId)
	// Not Karpenter's: no cluster tag.
	if _, err := l.ec2.RunInstances(ctx, &ec2.RunInstancesInput{
		ImageId: aws.String(l.class.Status.AMIs[0].ID), InstanceType: ec2types.InstanceTypeM6iLarge,
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
	}); err != nil {
		t.Fatal(err)
	}

	list, err := l.cp.List(ctx)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var ids []string
	for _, nc := range list {
		id, _ := cloudprovider.ParseInstanceID(nc.Status.ProviderID)
		ids = append(ids, id)
	}
	ownedID, _ := cloudprovider.ParseInstanceID(owned.Status.ProviderID)
	want := []string{ownedID, leaked}
	sort.Strings(want)
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}

	gc := cloudprovider.NewControllers(l.kube, l.cp, cloudprovider.GCOptions{MinAge: time.Nanosecond})[0].(*cloudprovider.GarbageCollector)
	if _, err := gc.Reconcile(ctx); err != nil {
		t.Fatalf("garbage collection: %v", err)
	}
	if st := l.describe(t, leaked).State.Name; st != ec2types.InstanceStateNameShuttingDown && st != ec2types.InstanceStateNameTerminated {
		t.Errorf("leaked instance is %s after garbage collection, want terminated", st)
	}
	if st := l.describe(t, ownedID).State.Name; st != ec2types.InstanceStateNameRunning {
		t.Errorf("owned instance is %s after garbage collection, want running", st)
	}
}

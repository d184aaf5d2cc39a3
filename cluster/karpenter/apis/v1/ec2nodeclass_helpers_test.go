package v1_test

import (
	"testing"

	"github.com/awslabs/operatorpkg/status"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	v1 "github.com/karplab/karplab/cluster/karpenter/apis/v1"
)

func seedNodeClass(t *testing.T) *v1.EC2NodeClass {
	t.Helper()
	nc := &v1.EC2NodeClass{}
	if err := yaml.UnmarshalStrict(readSeed(t), nc); err != nil {
		t.Fatal(err)
	}
	return nc
}

func TestHash(t *testing.T) {
	base := seedNodeClass(t).Hash()
	if base != seedNodeClass(t).Hash() {
		t.Fatal("hash of the same spec differs between calls")
	}
	for _, tc := range []struct {
		name   string
		mutate func(nc *v1.EC2NodeClass)
		drift  bool
	}{
		{"tag value", func(nc *v1.EC2NodeClass) { nc.Spec.Tags["owner"] = "someone-else" }, true},
		{"volume size", func(nc *v1.EC2NodeClass) {
			q := resource.MustParse("100Gi")
			nc.Spec.BlockDeviceMappings[0].EBS.VolumeSize = &q
		}, true},
		{"httpTokens", func(nc *v1.EC2NodeClass) { nc.Spec.MetadataOptions.HTTPTokens = new("optional") }, true},
		{"user data", func(nc *v1.EC2NodeClass) { nc.Spec.UserData = new("#!/bin/bash") }, true},
		{"kubelet maxPods", func(nc *v1.EC2NodeClass) { nc.Spec.Kubelet = &v1.KubeletConfiguration{MaxPods: new(int32(20))} }, true},
		{"role", func(nc *v1.EC2NodeClass) { nc.Spec.Role = "OtherRole" }, true},
		// Resolved through status, so not drift by themselves.
		{"subnet selector", func(nc *v1.EC2NodeClass) {
			nc.Spec.SubnetSelectorTerms = []v1.SubnetSelectorTerm{{ID: "subnet-0123"}}
		}, false},
		{"AMI alias version", func(nc *v1.EC2NodeClass) {
			nc.Spec.AMISelectorTerms = []v1.AMISelectorTerm{{Alias: "al2023@v20261101"}}
		}, false},
		{"amiFamily set to what the alias implies", func(nc *v1.EC2NodeClass) { nc.Spec.AMIFamily = new(v1.AMIFamilyAL2023) }, false},
		{"status and metadata", func(nc *v1.EC2NodeClass) {
			nc.Status.InstanceProfile = "x"
			nc.Annotations = map[string]string{"a": "b"}
		}, false},
		{"tags reordered", func(nc *v1.EC2NodeClass) {
			nc.Spec.Tags = map[string]string{"owner": "platform", "environment": "production", "application": "ziba"}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc := seedNodeClass(t)
			tc.mutate(nc)
			if got := nc.Hash() != base; got != tc.drift {
				t.Errorf("hash changed = %v, want %v", got, tc.drift)
			}
		})
	}
}

func TestParseAlias(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    v1.Alias
		wantErr bool
	}{
		{in: "al2023@latest", want: v1.Alias{Family: "AL2023", Version: "latest"}},
		{in: "al2023@v20261101", want: v1.Alias{Family: "AL2023", Version: "v20261101"}},
		{in: "bottlerocket@v1.20.0", want: v1.Alias{Family: "Bottlerocket", Version: "v1.20.0"}},
		{in: "al2023", wantErr: true},
		{in: "al2023@", wantErr: true},
		{in: "ubuntu@latest", wantErr: true},
		{in: "al2023@a@b", wantErr: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := v1.ParseAlias(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseAlias(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if err == nil && got.String() != tc.in {
				t.Errorf("String() = %q, want %q", got.String(), tc.in)
			}
		})
	}
}

func TestInstanceProfileName(t *testing.T) {
	a := seedNodeClass(t)
	b := seedNodeClass(t)
	b.Name = "other"
	if a.InstanceProfileName("karplab", "eu-west-2") != a.InstanceProfileName("karplab", "eu-west-2") {
		t.Error("instance profile name is not deterministic")
	}
	if a.InstanceProfileName("karplab", "eu-west-2") == b.InstanceProfileName("karplab", "eu-west-2") {
		t.Error("two node classes share an instance profile name")
	}
}

func TestStatusConditions(t *testing.T) {
	nc := seedNodeClass(t)
	nc.Generation = 1
	if nc.StatusConditions().Root().IsTrue() {
		t.Fatal("a fresh EC2NodeClass is Ready")
	}
	conds := nc.StatusConditions()
	conds.SetTrue(v1.ConditionTypeAMIsReady)
	conds.SetTrue(v1.ConditionTypeSubnetsReady)
	conds.SetTrue(v1.ConditionTypeSecurityGroupsReady)
	if nc.StatusConditions().Root().IsTrue() {
		t.Fatal("Ready before InstanceProfileReady")
	}
	conds.SetTrue(v1.ConditionTypeInstanceProfileReady)
	if !nc.StatusConditions().Root().IsTrue() {
		t.Fatalf("not Ready with every dependent True: %+v", nc.Status.Conditions)
	}
	nc.StatusConditions().SetFalse(v1.ConditionTypeSubnetsReady, "SubnetsNotFound", "SubnetSelector did not match any Subnets")
	root := nc.StatusConditions().Root()
	want := status.Condition{Type: status.ConditionReady, Status: metav1.ConditionFalse, Reason: "UnhealthyDependents", Message: "SubnetsReady=False", ObservedGeneration: 1}
	if diff := cmp.Diff(want, *root, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".LastTransitionTime" }, cmp.Ignore())); diff != "" {
		t.Errorf("Ready (-want +got):\n%s", diff)
	}
}

func TestAMIFor(t *testing.T) {
	req := func(op corev1.NodeSelectorOperator, values ...string) []corev1.NodeSelectorRequirement {
		return []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: op, Values: values}}
	}
	nc := &v1.EC2NodeClass{Status: v1.EC2NodeClassStatus{AMIs: []v1.AMI{
		{ID: "ami-x86", Requirements: req(corev1.NodeSelectorOpIn, "amd64")},
		{ID: "ami-notx86", Requirements: req(corev1.NodeSelectorOpNotIn, "amd64")},
		{ID: "ami-any"},
	}}}
	for _, tc := range []struct{ arch, want string }{
		{"amd64", "ami-x86"},
		{"arm64", "ami-notx86"},
		{"s390x", "ami-notx86"},
	} {
		got, ok := nc.AMIFor(tc.arch)
		if !ok || got.ID != tc.want {
			t.Errorf("AMIFor(%s) = %s, %v; want %s", tc.arch, got.ID, ok, tc.want)
		}
	}
	if _, ok := (&v1.EC2NodeClass{}).AMIFor("amd64"); ok {
		t.Error("AMIFor found an AMI in an unresolved node class")
	}
}

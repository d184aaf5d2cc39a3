package replay

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"
)

// fakeCatalog is a catalog of one region.
type fakeCatalog struct{}

func (fakeCatalog) Zones(region string) ([]string, bool) {
	if region != "us-east-1" {
		return nil, false
	}
	return []string{"us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1e", "us-east-1f"}, true
}
func (fakeCatalog) HasInstanceType(region, name string) bool { return name == "m5.large" }
func (fakeCatalog) Regions() []string                        { return []string{"eu-west-2", "us-east-1"} }

func objects(t *testing.T, docs ...string) *Bundle {
	t.Helper()
	b := &Bundle{}
	for _, d := range docs {
		var m map[string]any
		if err := sigsyaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		b.Objects = append(b.Objects, &unstructured.Unstructured{Object: m})
	}
	return b
}

const class = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
status:
  amis: [{id: ami-1}]
  subnets: [{id: subnet-1, zone: us-east-1a}]
  securityGroups: [{id: sg-1}]
`

func claim(image string) string {
	return `apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: default-abc, labels: {topology.kubernetes.io/zone: us-east-1a, node.kubernetes.io/instance-type: m5.large}}
spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
status: {imageID: ` + image + `}
`
}

// Validate lists, one line each, everything the lab cannot represent, and changes nothing.
func TestValidateListsWhatTheLabCannotRepresent(t *testing.T) {
	tests := []struct {
		name      string
		docs      []string
		given     Given
		wantGaps  []string // each a substring of one gap, in order
		wantNotes []string
	}{
		{name: "no region anywhere", docs: []string{strings.ReplaceAll(node, "topology.kubernetes.io/region: us-east-1", "")},
			wantGaps: []string{"no region anywhere: no node carries label topology.kubernetes.io/region and no karpenter.yaml sets AWS_REGION; name it with --region"}},
		{name: "the region given", docs: []string{strings.ReplaceAll(node, "topology.kubernetes.io/region: us-east-1", ""), class, claim("ami-1")},
			given: Given{Region: "us-east-1"}},
		{name: "a region given against the nodes'", docs: []string{node}, given: Given{Region: "eu-west-2"},
			wantGaps: []string{"--region eu-west-2, but the nodes are in us-east-1"}},
		{name: "a bundle the lab can take", docs: []string{node, class, claim("ami-1")}},
		{name: "Karpenter v1beta1", docs: []string{node, "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: default}\n"},
			wantGaps: []string{"NodePool default is karpenter.sh/v1beta1: the lab replays Karpenter's v1 objects only"}},
		{name: "a kind not replayed", docs: []string{node, "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: a}\n"},
			wantGaps: []string{"Secret a/s (v1) is a kind the lab does not replay"}},
		{name: "an HPA, left out", docs: []string{node, "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h, namespace: a}\n"},
			wantNotes: []string{"1 HorizontalPodAutoscaler left out: it would rescale against the lab's metrics"}},
		{name: "an unknown region", docs: []string{strings.ReplaceAll(node, "us-east-1", "mars-west-1")},
			wantGaps: []string{"region mars-west-1: the lab has no data for it; it has [eu-west-2 us-east-1]"}},
		{name: "a zone the region lacks", docs: []string{strings.ReplaceAll(node, "us-east-1a", "us-east-1z")},
			wantGaps: []string{"Node ip-10-0-0-1.ec2.internal is in zone us-east-1z, which us-east-1 does not have"}},
		{name: "a type outside the catalog", docs: []string{strings.ReplaceAll(node, "m5.large", "x9z.huge")},
			wantGaps: []string{"Node ip-10-0-0-1.ec2.internal is a x9z.huge, which the lab's catalog of us-east-1 does not hold"}},
		{name: "an image its class does not name", docs: []string{node, class, claim("ami-2")},
			wantGaps: []string{"NodeClaim default-abc runs image ami-2, which EC2NodeClass default's status.amis does not name"}},
		{name: "a class missing", docs: []string{node, claim("ami-1")},
			wantGaps: []string{`NodeClaim default-abc names EC2NodeClass "default", which the bundle lacks`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Validate(objects(t, tt.docs...), fakeCatalog{}, tt.given)
			if len(r.Gaps) != len(tt.wantGaps) {
				t.Fatalf("gaps %q, want %d like %q", r.Gaps, len(tt.wantGaps), tt.wantGaps)
			}
			for i, want := range tt.wantGaps {
				if !strings.Contains(r.Gaps[i], want) {
					t.Errorf("gap %d: %q, want %q", i, r.Gaps[i], want)
				}
			}
			if diff := cmp.Diff(tt.wantNotes, r.Notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			if len(tt.wantGaps) == 0 && r.Region != "us-east-1" {
				t.Errorf("region %q, want us-east-1", r.Region)
			}
		})
	}
}

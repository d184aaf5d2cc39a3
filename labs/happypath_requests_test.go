package labs

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/karplab/karplab/fakeec2/accesskeys"
	"github.com/karplab/karplab/fakeec2/trail"
)

// TestIntegrationHappyPathRequests records what the real karpenter-provider-aws asks of the
// account (EC2, IAM, SSM, SQS, EKS, Pricing) from its start after a reset through the seed's
// happy path, as each distinct call's shape, into a golden file; and it asserts the shape of
// the launch itself and the order of the calls a launch depends on.
func TestIntegrationHappyPathRequests(t *testing.T) {
	e := freshLab(t)
	l, _ := Get("happy-path")
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Solution: true, Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	if r := checkUntil(t, e, l, true, time.Minute); !r.Passed {
		t.Fatalf("the solution does not pass:\n%s", reportText(r))
	}
	audit, err := e.Admin.Audit(t.Context(), trail.AuditQuery{Caller: accesskeys.Karpenter})
	if err != nil {
		t.Fatal(err)
	}
	// From the restarted controller's first call (it resolves its queue first): the reset
	// also catches the previous one mid-poll.
	for i, a := range audit {
		if a.Service == "sqs" && a.Action == "GetQueueUrl" {
			audit = audit[i:]
			break
		}
	}
	golden(t, "happy-requests.txt", []byte(requestShapes(audit)))

	first := map[string]time.Time{}
	var fleet *trail.AuditEvent
	for i, a := range audit {
		key := a.Service + " " + a.Action
		if a.DryRun || a.ErrorCode != "" {
			continue
		}
		if _, ok := first[key]; !ok {
			first[key] = a.Time
		}
		if a.Action == "CreateFleet" && len(a.Created) > 0 && fleet == nil {
			fleet = &audit[i]
		}
	}
	if fleet == nil {
		t.Fatalf("no CreateFleet by Karpenter created an instance:\n%s", requestShapes(audit))
	}
	checkFleetShape(t, fleet.Parameters)
	// A launch needs its AMI (SSM, then EC2), its instance profile (IAM) and its launch
	// template; the NodeClaim tag comes after it.
	for _, order := range [][2]string{
		{"ssm GetParameter", "ec2 CreateFleet"}, {"ec2 DescribeImages", "ec2 CreateFleet"},
		{"iam CreateInstanceProfile", "ec2 CreateLaunchTemplate"}, {"iam AddRoleToInstanceProfile", "ec2 CreateFleet"},
		{"eks DescribeCluster", "ec2 CreateLaunchTemplate"}, {"ec2 CreateLaunchTemplate", "ec2 CreateFleet"},
		{"ec2 CreateFleet", "ec2 CreateTags"},
	} {
		a, okA := first[order[0]]
		b, okB := first[order[1]]
		if !okA || !okB || b.Before(a) {
			t.Errorf("%s (%v, seen %t) should come before %s (%v, seen %t)", order[0], a, okA, order[1], b, okB)
		}
	}
}

// checkFleetShape asserts the real provider's CreateFleet: an instant fleet of one, launch
// template configs named karpenter.k8s.aws/<hash> at $Latest, each override one instance
// type in one subnet and zone, and AWS's allocation strategies.
func checkFleetShape(t *testing.T, p map[string]string) {
	t.Helper()
	want := map[string]string{"Type": "instant", "TargetCapacitySpecification.TotalTargetCapacity": "1"}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("CreateFleet %s = %q, want %q", k, p[k], v)
		}
	}
	switch p["TargetCapacitySpecification.DefaultTargetCapacityType"] {
	case "spot":
		if s := p["SpotOptions.AllocationStrategy"]; s != "price-capacity-optimized" {
			t.Errorf("spot CreateFleet allocation strategy %q, want price-capacity-optimized", s)
		}
	case "on-demand":
		if s := p["OnDemandOptions.AllocationStrategy"]; s != "lowest-price" {
			t.Errorf("on-demand CreateFleet allocation strategy %q, want lowest-price", s)
		}
	default:
		t.Errorf("CreateFleet capacity type %q", p["TargetCapacitySpecification.DefaultTargetCapacityType"])
	}
	pairs := map[string]bool{}
	overrides := 0
	for c := 1; p[fmt.Sprintf("LaunchTemplateConfigs.%d.LaunchTemplateSpecification.LaunchTemplateName", c)] != ""; c++ {
		prefix := fmt.Sprintf("LaunchTemplateConfigs.%d.", c)
		if name := p[prefix+"LaunchTemplateSpecification.LaunchTemplateName"]; !regexp.MustCompile(`^karpenter\.k8s\.aws/[0-9]+$`).MatchString(name) {
			t.Errorf("launch template name %q, want karpenter.k8s.aws/<hash>", name)
		}
		if v := p[prefix+"LaunchTemplateSpecification.Version"]; v != "$Latest" {
			t.Errorf("launch template version %q, want $Latest", v)
		}
		for o := 1; p[fmt.Sprintf("%sOverrides.%d.InstanceType", prefix, o)] != ""; o++ {
			op := fmt.Sprintf("%sOverrides.%d.", prefix, o)
			if p[op+"SubnetId"] == "" || p[op+"AvailabilityZone"] == "" {
				t.Errorf("override %s has no subnet or zone: %v", op, p)
			}
			pair := p[op+"InstanceType"] + "/" + p[op+"SubnetId"]
			if pairs[pair] {
				t.Errorf("override %s repeats %s", op, pair)
			}
			pairs[pair] = true
			overrides++
		}
	}
	if overrides < 2 {
		t.Errorf("CreateFleet has %d overrides, want one per instance type and subnet (several)", overrides)
	}
}

// shapeValues are the parameters whose values are part of a call's shape: what kind of
// launch, which filters, which tags; the rest (IDs, names, tokens) is reduced to its key.
var shapeValues = regexp.MustCompile(`^(Type|DryRun|.*AllocationStrategy|.*DefaultTargetCapacityType|.*ResourceType|Filter\.N\.Name|.*Tag\.N\.Key|Tags\.member\.N\.Key|LocationType|ServiceCode|.*\.Version|IncludeDeprecated|PathPrefix)$`)

var indexRe = regexp.MustCompile(`\.[0-9]+`)

// requestShapes renders each distinct call (service, action, parameter keys with indices
// folded to N, and the values shapeValues keeps) once, sorted, with how often it was made.
func requestShapes(audit []trail.AuditEvent) string {
	type shape struct {
		head   string
		keys   map[string]map[string]bool
		errors map[string]bool
	}
	shapes := map[string]*shape{}
	for _, a := range audit {
		head := fmt.Sprintf("%s %s", a.Service, a.Action)
		if a.DryRun {
			head += " (DryRun)"
		}
		s := shapes[head]
		if s == nil {
			s = &shape{head: head, keys: map[string]map[string]bool{}, errors: map[string]bool{}}
			shapes[head] = s
		}
		for k, v := range a.Parameters {
			k = indexRe.ReplaceAllString(k, ".N")
			if k == "DryRun" {
				continue
			}
			if s.keys[k] == nil {
				s.keys[k] = map[string]bool{}
			}
			if shapeValues.MatchString(k) {
				s.keys[k][v] = true
			}
		}
		if a.ErrorCode != "" {
			s.errors[a.ErrorCode] = true
		}
	}
	var heads []string
	for h := range shapes {
		heads = append(heads, h)
	}
	sort.Strings(heads)
	var b strings.Builder
	for _, h := range heads {
		s := shapes[h]
		fmt.Fprintln(&b, h)
		var keys []string
		for k := range s.keys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			var vals []string
			for v := range s.keys[k] {
				vals = append(vals, v)
			}
			sort.Strings(vals)
			if len(vals) > 0 {
				fmt.Fprintf(&b, "  %s = %s\n", k, strings.Join(vals, " | "))
			} else {
				fmt.Fprintf(&b, "  %s\n", k)
			}
		}
		var errs []string
		for e := range s.errors {
			errs = append(errs, e)
		}
		sort.Strings(errs)
		for _, e := range errs {
			fmt.Fprintf(&b, "  error %s\n", e)
		}
	}
	return b.String()
}

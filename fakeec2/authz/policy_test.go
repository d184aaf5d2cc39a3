package authz

import (
	"fmt"
	"testing"
)

func TestPolicyAuthorize(t *testing.T) {
	nodeRole := "arn:aws:iam::123456789012:role/KarpenterNodeRole-ziba-production"
	controller := PolicyStatement{Sid: "controller", Callers: []string{"karpenter"},
		AllowActions: []string{"ec2:Describe*", "ec2:CreateFleet", "iam:PassRole", "ssm:GetParameter", "sqs:ReceiveMessage"}}
	tests := []struct {
		name                     string
		policy                   Policy
		caller, action, resource string
		denied                   bool
	}{
		{name: "empty policy allows", caller: "karpenter", action: "iam:CreateInstanceProfile", resource: "*"},
		{name: "bare deny is ec2", policy: Policy{Statements: []PolicyStatement{{DenyActions: []string{"CreateFleet"}}}},
			caller: "karpenter", action: "ec2:CreateFleet", resource: "*", denied: true},
		{name: "bare deny leaves other services", policy: Policy{Statements: []PolicyStatement{{DenyActions: []string{"CreateFleet"}}}},
			caller: "karpenter", action: "iam:CreateFleet", resource: "*"},
		{name: "service glob", policy: Policy{Statements: []PolicyStatement{{DenyActions: []string{"ssm:*"}}}},
			caller: "lab", action: "ssm:GetParameter", resource: "*", denied: true},
		{name: "case-insensitive", policy: Policy{Statements: []PolicyStatement{{DenyActions: []string{"iam:passrole"}}}},
			caller: "lab", action: "iam:PassRole", resource: nodeRole, denied: true},
		{name: "deny scoped to another resource", policy: Policy{Statements: []PolicyStatement{{DenyActions: []string{"iam:PassRole"},
			Resources: []string{"arn:aws:iam::123456789012:role/Admin*"}}}},
			caller: "karpenter", action: "iam:PassRole", resource: nodeRole},
		{name: "deny scoped to the node role", policy: Policy{Statements: []PolicyStatement{{DenyActions: []string{"iam:PassRole"},
			Resources: []string{"arn:aws:iam::*:role/KarpenterNodeRole-*"}}}},
			caller: "karpenter", action: "iam:PassRole", resource: nodeRole, denied: true},
		{name: "allow list admits", policy: Policy{Statements: []PolicyStatement{controller}},
			caller: "karpenter", action: "ec2:DescribeSubnets", resource: "*"},
		{name: "allow list implicitly denies", policy: Policy{Statements: []PolicyStatement{controller}},
			caller: "karpenter", action: "iam:CreateRole", resource: "*", denied: true},
		{name: "allow list governs only its callers", policy: Policy{Statements: []PolicyStatement{controller}},
			caller: "lab", action: "iam:CreateRole", resource: "*"},
		{name: "explicit deny beats allow", policy: Policy{Statements: []PolicyStatement{controller,
			{Callers: []string{"karpenter"}, DenyActions: []string{"ec2:CreateFleet"}}}},
			caller: "karpenter", action: "ec2:CreateFleet", resource: "*", denied: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason := tt.policy.Authorize(tt.caller, tt.action, tt.resource)
			if (reason != "") != tt.denied {
				t.Errorf("Authorize(%s, %s, %s) = %q, want denied=%v", tt.caller, tt.action, tt.resource, reason, tt.denied)
			}
		})
	}
}

// An encoded message is pasted as a command-line argument; one starting with '-' would be
// read as a flag. About one in 64 plain encodings starts with one.
func TestEncodedAuthorizationMessageIsNoFlag(t *testing.T) {
	seen := map[string]bool{}
	for i := range 2000 {
		msg := EncodeMessage(fmt.Sprintf("req-%d", i), "denied")
		if msg[0] == '-' {
			t.Fatalf("message %q starts with '-'", msg)
		}
		if seen[msg] {
			t.Fatalf("message %q encoded twice", msg)
		}
		seen[msg] = true
	}
}

func TestPolicyCheckPlacement(t *testing.T) {
	tests := []struct {
		name                string
		st                  PolicyStatement
		typ, zone, capacity string
		denied              bool
	}{
		{name: "family admits", st: PolicyStatement{AllowedInstanceFamilies: []string{"m6i"}}, typ: "m6i.large"},
		{name: "type glob admits", st: PolicyStatement{AllowedInstanceTypes: []string{"c7g.*"}}, typ: "c7g.xlarge"},
		{name: "neither list admits", st: PolicyStatement{AllowedInstanceFamilies: []string{"m6i"}, AllowedInstanceTypes: []string{"c7g.*"}},
			typ: "m6a.large", denied: true},
		{name: "denied glob", st: PolicyStatement{DeniedInstanceTypes: []string{"*.metal"}}, typ: "m6i.metal", denied: true},
		{name: "zone outside the list", st: PolicyStatement{AllowedZones: []string{"eu-west-2a"}}, typ: "m6i.large", zone: "eu-west-2b", denied: true},
		{name: "capacity type outside the list", st: PolicyStatement{AllowedCapacityTypes: []string{"on-demand"}}, typ: "m6i.large",
			capacity: "spot", denied: true},
		{name: "another caller's statement", st: PolicyStatement{Callers: []string{"learner"}, DeniedInstanceTypes: []string{"*"}}, typ: "m6i.large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Policy{Statements: []PolicyStatement{tt.st}}
			reason := p.CheckPlacement("karpenter", tt.typ, tt.zone, tt.capacity)
			if (reason != "") != tt.denied {
				t.Errorf("CheckPlacement(%s, %s, %s) = %q, want denied=%v", tt.typ, tt.zone, tt.capacity, reason, tt.denied)
			}
		})
	}
}

// The live count is taken only when a cap applies: it walks every instance.
func TestPolicyCheckLaunchCountsOnlyUnderACap(t *testing.T) {
	counted := 0
	live := func() int { counted++; return 3 }
	if reason := (Policy{}).CheckLaunch("karpenter", Launch{Count: 10}, live); reason != "" || counted != 0 {
		t.Errorf("no cap: reason %q after %d counts, want none and no count", reason, counted)
	}
	capped := Policy{Statements: []PolicyStatement{{MaxInstances: 4}}}
	if reason := capped.CheckLaunch("karpenter", Launch{Count: 1}, live); reason != "" {
		t.Errorf("3 live + 1 under a cap of 4: %q, want allowed", reason)
	}
	if reason := capped.CheckLaunch("karpenter", Launch{Count: 2}, live); reason == "" {
		t.Error("3 live + 2 under a cap of 4: allowed, want denied")
	}
}

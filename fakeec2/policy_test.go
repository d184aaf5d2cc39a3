package fakeec2

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
			reason := tt.policy.authorize(tt.caller, tt.action, tt.resource)
			if (reason != "") != tt.denied {
				t.Errorf("authorize(%s, %s, %s) = %q, want denied=%v", tt.caller, tt.action, tt.resource, reason, tt.denied)
			}
		})
	}
}

// An encoded message is pasted as a command-line argument; one starting with '-' would be
// read as a flag. About one in 64 plain encodings starts with one.
func TestEncodedAuthorizationMessageIsNoFlag(t *testing.T) {
	seen := map[string]bool{}
	for i := range 2000 {
		msg := encodeAuthorizationMessage(fmt.Sprintf("req-%d", i), "denied")
		if msg[0] == '-' {
			t.Fatalf("message %q starts with '-'", msg)
		}
		if seen[msg] {
			t.Fatalf("message %q encoded twice", msg)
		}
		seen[msg] = true
	}
}

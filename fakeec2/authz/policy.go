package authz

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// Policy is the IAM-like policy the emulator enforces. Every statement that applies to
// the caller must be satisfied; an empty policy allows everything. A violation fails the
// call with UnauthorizedOperation and an opaque encoded message, creates nothing, and the
// audit trail keeps the decoded reason.
type Policy struct {
	Statements []PolicyStatement `json:"statements"`
}

// PolicyStatement is one set of conditions. Empty fields impose nothing.
type PolicyStatement struct {
	Sid string `json:"sid,omitempty"`
	// Callers are the access key IDs the statement applies to; empty or "*" means all.
	Callers []string `json:"callers,omitempty"`
	// DenyActions are actions the caller may not call at all: "service:Action" as IAM
	// spells them ("iam:PassRole", "ssm:*"); a name without a service is EC2's.
	DenyActions []string `json:"denyActions,omitempty"`
	// AllowActions, when any statement that governs a caller sets them, are the only
	// actions that caller may call (IAM's implicit deny): the union over its statements.
	AllowActions []string `json:"allowActions,omitempty"`
	// Resources narrow DenyActions to these ARNs (globs); empty: every resource.
	Resources []string `json:"resources,omitempty"`
	// AllowedInstanceFamilies ("m6i", "c7g") and AllowedInstanceTypes (globs such as
	// "m6i.*") limit what may be launched; a type passes if either list admits it.
	AllowedInstanceFamilies []string `json:"allowedInstanceFamilies,omitempty"`
	AllowedInstanceTypes    []string `json:"allowedInstanceTypes,omitempty"`
	DeniedInstanceTypes     []string `json:"deniedInstanceTypes,omitempty"` // globs
	AllowedZones            []string `json:"allowedZones,omitempty"`
	AllowedCapacityTypes    []string `json:"allowedCapacityTypes,omitempty"` // "spot", "on-demand"
	// RequiredTags are tag keys every launched instance must carry at launch.
	RequiredTags []string `json:"requiredTags,omitempty"`
	// RequireEncryptedVolumes rejects launches with any unencrypted EBS volume.
	RequireEncryptedVolumes bool `json:"requireEncryptedVolumes,omitempty"`
	// RequireIMDSv2 rejects launches whose MetadataOptions.HttpTokens is not "required".
	RequireIMDSv2 bool `json:"requireImdsv2,omitempty"`
	// MaxInstances caps the account's pending and running instances (0: no cap).
	MaxInstances int `json:"maxInstances,omitempty"`
}

// Clone copies p deeply enough that no caller shares its statements.
func (p Policy) Clone() Policy {
	return Policy{Statements: append([]PolicyStatement(nil), p.Statements...)}
}

// AppliesTo reports whether the statement governs caller (no Callers: everyone).
func (st PolicyStatement) AppliesTo(caller string) bool {
	if len(st.Callers) == 0 {
		return true
	}
	for _, c := range st.Callers {
		if c == "*" || c == caller {
			return true
		}
	}
	return false
}

func (st PolicyStatement) name(i int) string {
	if st.Sid != "" {
		return fmt.Sprintf("statement %q", st.Sid)
	}
	return fmt.Sprintf("statement %d", i+1)
}

func globAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, s); ok || p == s {
			return true
		}
	}
	return false
}

// Authorize returns why the policy forbids caller to call action ("ec2:CreateFleet",
// "iam:PassRole") on resource, or "".
func (p Policy) Authorize(caller, action, resource string) string {
	allowListed, allowed := false, false
	for i, st := range p.Statements {
		if !st.AppliesTo(caller) {
			continue
		}
		if len(st.AllowActions) > 0 {
			allowListed = true
			allowed = allowed || matchAction(st.AllowActions, action)
		}
		if matchAction(st.DenyActions, action) && st.coversResource(resource) {
			return fmt.Sprintf("%s denies %s to caller %s", st.name(i), action, caller)
		}
	}
	if allowListed && !allowed {
		return fmt.Sprintf("no statement allows %s to caller %s", action, caller)
	}
	return ""
}

// matchAction reports whether action ("ec2:CreateFleet") matches a pattern; IAM action
// names are case-insensitive and a pattern without a service is EC2's.
func matchAction(patterns []string, action string) bool {
	action = strings.ToLower(action)
	for _, p := range patterns {
		if !strings.Contains(p, ":") {
			p = "ec2:" + p
		}
		if wire.WildMatch(strings.ToLower(p), action) {
			return true
		}
	}
	return false
}

func (st PolicyStatement) coversResource(resource string) bool {
	if len(st.Resources) == 0 || resource == "*" {
		return true
	}
	for _, r := range st.Resources {
		if wire.WildMatch(r, resource) {
			return true
		}
	}
	return false
}

// Launch is what the policy looks at in a launch request.
type Launch struct {
	Count        int
	InstanceTags []ec2.Tag
	Volumes      []Volume
	HTTPTokens   string
}

// Volume is one EBS volume of a launch request.
type Volume struct {
	Device    string
	Encrypted bool
}

// CheckLaunch returns why the policy forbids the request as a whole, or "". live counts
// the account's pending and running instances; it is called only if a cap applies.
func (p Policy) CheckLaunch(caller string, lc Launch, live func() int) string {
	for i, st := range p.Statements {
		if !st.AppliesTo(caller) {
			continue
		}
		var missing []string
		for _, k := range st.RequiredTags {
			if _, ok := ec2.TagValue(lc.InstanceTags, k); !ok {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("%s requires instance tags %v at launch; missing %v", st.name(i), st.RequiredTags, missing)
		}
		if st.RequireEncryptedVolumes {
			for _, v := range lc.Volumes {
				if !v.Encrypted {
					return fmt.Sprintf("%s requires encrypted EBS volumes; volume %s is not encrypted", st.name(i), v.Device)
				}
			}
		}
		if st.RequireIMDSv2 && lc.HTTPTokens != "required" {
			tokens := lc.HTTPTokens
			if tokens == "" {
				tokens = "optional (unset)"
			}
			return fmt.Sprintf("%s requires MetadataOptions.HttpTokens=required (IMDSv2); request has %s", st.name(i), tokens)
		}
		if st.MaxInstances > 0 {
			if n := live(); n+lc.Count > st.MaxInstances {
				return fmt.Sprintf("%s caps the account at %d instances; %d are pending or running and %d more were requested",
					st.name(i), st.MaxInstances, n, lc.Count)
			}
		}
	}
	return ""
}

// CheckPlacement returns why the policy forbids launching instanceType in zone as
// capacityType, or "".
func (p Policy) CheckPlacement(caller, instanceType, zone, capacityType string) string {
	family, _, _ := strings.Cut(instanceType, ".")
	for i, st := range p.Statements {
		if !st.AppliesTo(caller) {
			continue
		}
		if len(st.AllowedInstanceFamilies)+len(st.AllowedInstanceTypes) > 0 &&
			!slices.Contains(st.AllowedInstanceFamilies, family) && !globAny(st.AllowedInstanceTypes, instanceType) {
			allowed := append(append([]string{}, st.AllowedInstanceFamilies...), st.AllowedInstanceTypes...)
			sort.Strings(allowed)
			return fmt.Sprintf("%s does not allow instance type %s (allowed families/types: %s)",
				st.name(i), instanceType, strings.Join(allowed, ", "))
		}
		if globAny(st.DeniedInstanceTypes, instanceType) {
			return fmt.Sprintf("%s denies instance type %s", st.name(i), instanceType)
		}
		if len(st.AllowedZones) > 0 && !slices.Contains(st.AllowedZones, zone) {
			return fmt.Sprintf("%s does not allow availability zone %s (allowed: %s)",
				st.name(i), zone, strings.Join(st.AllowedZones, ", "))
		}
		if len(st.AllowedCapacityTypes) > 0 && !slices.Contains(st.AllowedCapacityTypes, capacityType) {
			return fmt.Sprintf("%s does not allow capacity type %s (allowed: %s)",
				st.name(i), capacityType, strings.Join(st.AllowedCapacityTypes, ", "))
		}
	}
	return ""
}

// EncodeMessage makes the opaque failure message of a denial (AWS's is decodable only by
// sts:DecodeAuthorizationMessage; ours by the admin API, from the audit trail). It never
// starts with '-', which a command line would take for a flag (`karplab ec2 decode MESSAGE`).
func EncodeMessage(requestID, reason string) string {
	sum := sha256.Sum256([]byte(requestID + "\x00" + reason))
	sum2 := sha256.Sum256(sum[:])
	msg := base64.RawURLEncoding.EncodeToString(append(sum[:], sum2[:]...))
	if msg[0] == '-' {
		msg = "A" + msg[1:]
	}
	return msg
}

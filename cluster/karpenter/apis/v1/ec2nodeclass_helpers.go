package v1

import (
	"fmt"
	"strings"

	"github.com/mitchellh/hashstructure/v2"
)

// EC2NodeClassHashVersion changes whenever Hash would change for an unchanged spec (a
// default changes, a field joins or leaves the hash), so that the cloud provider can
// tell "the spec changed" (drift) from "the hash function changed" (re-stamp, no drift).
const EC2NodeClassHashVersion = "v1"

// AliasVersionLatest is the alias version that always selects the newest release.
const AliasVersionLatest = "latest"

// Alias is a parsed amiSelectorTerms[].alias such as al2023@latest or al2023@v20261101.
type Alias struct {
	// Family is the AMI family in spec.amiFamily's spelling, e.g. "AL2023".
	Family string
	// Version is "latest" or a release such as "v20261101".
	Version string
}

func (a Alias) String() string {
	return strings.ToLower(a.Family) + "@" + a.Version
}

var aliasFamilies = map[string]string{
	"al2":          AMIFamilyAL2,
	"al2023":       AMIFamilyAL2023,
	"bottlerocket": AMIFamilyBottlerocket,
	"windows2019":  AMIFamilyWindows2019,
	"windows2022":  AMIFamilyWindows2022,
}

// ParseAlias parses "family@version". The CRD already rejects malformed aliases; this is
// for callers holding objects that did not pass the API server.
func ParseAlias(s string) (Alias, error) {
	family, version, ok := strings.Cut(s, "@")
	if !ok || family == "" || version == "" || strings.Contains(version, "@") {
		return Alias{}, fmt.Errorf("alias %q is improperly formatted, must match the format 'family@version'", s)
	}
	f, ok := aliasFamilies[family]
	if !ok {
		return Alias{}, fmt.Errorf("alias %q: family %q is not supported", s, family)
	}
	return Alias{Family: f, Version: version}, nil
}

// Alias returns the parsed alias of the (only) alias term, or nil when the AMI selector
// terms have none or it does not parse.
func (in *EC2NodeClass) Alias() *Alias {
	for _, term := range in.Spec.AMISelectorTerms {
		if term.Alias == "" {
			continue
		}
		a, err := ParseAlias(term.Alias)
		if err != nil {
			return nil
		}
		return &a
	}
	return nil
}

// AMIFamily returns spec.amiFamily if set, else the alias's family, else Custom (which
// validation makes unreachable: without an alias amiFamily is required).
func (in *EC2NodeClass) AMIFamily() string {
	if in.Spec.AMIFamily != nil {
		return *in.Spec.AMIFamily
	}
	if a := in.Alias(); a != nil {
		return a.Family
	}
	return AMIFamilyCustom
}

// Hash is the drift hash of the spec: fields that are resolved into status (selector
// terms) are excluded, AMIFamily is hashed as resolved, slices are sets and zero values
// and nil are alike, as in karpenter-provider-aws.
func (in *EC2NodeClass) Hash() string {
	h, err := hashstructure.Hash([]any{in.Spec, in.AMIFamily()}, hashstructure.FormatV2, &hashstructure.HashOptions{
		SlicesAsSets:    true,
		IgnoreZeroValue: true,
		ZeroNil:         true,
	})
	if err != nil {
		// Only reachable if a field of the spec is given a type hashstructure cannot hash:
		// a programming error caught by the tests.
		panic(fmt.Sprintf("hashing EC2NodeClass spec: %v", err))
	}
	return fmt.Sprint(h)
}

// InstanceProfileName is the instance profile a role-based EC2NodeClass resolves to:
// "<cluster>_<hash of region and nodeclass name>", the deterministic form of
// karpenter-provider-aws's generated names. The lab has no IAM, so nothing is created;
// the name is only carried into status and the launch template.
func (in *EC2NodeClass) InstanceProfileName(clusterName, region string) string {
	h, err := hashstructure.Hash(region+in.Name, hashstructure.FormatV2, nil)
	if err != nil {
		panic(fmt.Sprintf("hashing instance profile name: %v", err)) // unreachable for a string
	}
	return fmt.Sprintf("%s_%d", clusterName, h)
}

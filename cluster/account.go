package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/karplab/karplab/fakeec2/ec2"
)

// Account is the lab's AWS account: its region, zones and the EKS cluster it is set up
// for. It is chosen at the first `karplab start` and kept in the lab home
// (account.json), so every later start, and every process of the lab, agrees on it.
type Account struct {
	Region string   `json:"region"`
	Zones  []string `json:"zones"` // zone names, in the region's order
	// ClusterName is the EKS cluster's name: Karpenter's CLUSTER_NAME, the
	// kubernetes.io/cluster/NAME tag, the interruption queue's name.
	ClusterName string `json:"clusterName"`
	// DiscoveryTag is karpenter.sh/discovery's value on the account's subnets and node
	// security group, and NAME of its roles KarpenterNodeRole-NAME: the cluster's name, as
	// Karpenter's getting-started guide sets an account up; the course's ziba-production for
	// the default cluster.
	DiscoveryTag string `json:"discoveryTag"`
}

// The course's account: the default.
const (
	DefaultRegion       = ec2.DefaultRegion
	DefaultClusterName  = "karplab"
	DefaultDiscoveryTag = "ziba-production"
)

// DefaultAccount is the course's account: eu-west-2 with its three zones, cluster karplab,
// discovery tag and node role ziba-production.
func DefaultAccount() Account {
	a, _ := NewAccount("", nil, "")
	return a
}

// NewAccount checks the user's choices and returns the account they make; empty choices
// take the defaults (every zone of the region). Each error is one line naming the value
// and what is accepted.
func NewAccount(region string, zones []string, clusterName string) (Account, error) {
	if region == "" {
		region = DefaultRegion
	}
	if clusterName == "" {
		clusterName = DefaultClusterName
	}
	r, err := ec2.LookupRegion(region)
	if err != nil {
		return Account{}, &UsageError{Err: fmt.Errorf("unknown --region: %w", err)}
	}
	r, err = r.SelectZones(zones)
	if err != nil {
		return Account{}, &UsageError{Err: fmt.Errorf("--zones: %w", err)}
	}
	if errs := validation.IsDNS1123Label(clusterName); len(errs) > 0 {
		return Account{}, &UsageError{Err: fmt.Errorf("--cluster-name %q: Kubernetes accepts lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters (%s)", clusterName, errs[0])}
	}
	tag := clusterName
	if clusterName == DefaultClusterName {
		tag = DefaultDiscoveryTag
	}
	return Account{Region: r.Name, Zones: r.ZoneNames(), ClusterName: clusterName, DiscoveryTag: tag}, nil
}

// UsageError is a choice the lab refuses (exit 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// NodeRole is the IAM role the account's nodes use: KarpenterNodeRole-<discovery tag>.
func (a Account) NodeRole() string { return "KarpenterNodeRole-" + a.DiscoveryTag }

// ZoneList returns the account's zones with their IDs.
func (a Account) ZoneList() []ec2.Zone {
	r, err := ec2.LookupRegion(a.Region)
	if err != nil {
		return nil
	}
	r, _ = r.SelectZones(a.Zones)
	return r.Zones
}

// AccountFile holds the lab's Account (JSON).
func (h Home) AccountFile() string { return h.path("account.json") }

// ReadAccount returns the home's account, or the default when the home has none yet.
func (h Home) ReadAccount() (Account, error) {
	b, err := os.ReadFile(h.AccountFile())
	if errors.Is(err, os.ErrNotExist) {
		return DefaultAccount(), nil
	}
	if err != nil {
		return Account{}, err
	}
	var a Account
	if err := json.Unmarshal(b, &a); err != nil {
		return Account{}, fmt.Errorf("reading %s: %w", h.AccountFile(), err)
	}
	return a, nil
}

// ChooseAccount settles the account of a start: the home's when it has one (choices that
// differ are refused: its EC2 state belongs to that account), else the choices, written to
// the home.
func (h Home) ChooseAccount(region string, zones []string, clusterName string) (Account, error) {
	want, err := NewAccount(region, zones, clusterName)
	if err != nil {
		return Account{}, err
	}
	_, errAccount := os.Stat(h.AccountFile())
	_, errEC2 := os.Stat(h.EC2Dir())
	if errAccount == nil || errEC2 == nil { // a home from before account.json holds the default's
		have, err := h.ReadAccount()
		if err != nil {
			return Account{}, err
		}
		if (region != "" && region != have.Region) || (clusterName != "" && clusterName != have.ClusterName) ||
			(len(zones) > 0 && !slices.Equal(want.Zones, have.Zones)) {
			return Account{}, &UsageError{Err: fmt.Errorf("this lab home's account is %s (zones %s, cluster %s): start another with KARPLAB_HOME=DIR, or remove %s first",
				have.Region, strings.Join(have.Zones, ","), have.ClusterName, h)}
		}
		if errAccount != nil {
			return have, writeJSONAtomic(h.AccountFile(), have)
		}
		return have, nil
	}
	if err := h.Ensure(); err != nil {
		return Account{}, err
	}
	return want, writeJSONAtomic(h.AccountFile(), want)
}

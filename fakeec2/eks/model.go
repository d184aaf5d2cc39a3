package eks

import (
	"fmt"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
)

const bucket = "eks-clusters"

// VPCConfig is a cluster's resourcesVpcConfig.
type VPCConfig struct {
	VPCID                  string
	SubnetIDs              []string
	SecurityGroupIDs       []string
	ClusterSecurityGroupID string
	EndpointPublicAccess   bool
	EndpointPrivateAccess  bool
	PublicAccessCIDRs      []string // default ["0.0.0.0/0"] when the endpoint is public
}

// Cluster is the truth about one EKS cluster, as fakeec2 sets it.
type Cluster struct {
	Name                     string
	Endpoint                 string // "https://ABCD.gr7.eu-west-2.eks.amazonaws.com"
	CertificateAuthorityData string // base64 of the CA's PEM
	Version                  string // "1.33"
	PlatformVersion          string // "eks.5"
	Status                   string // default ACTIVE
	ServiceIPv4CIDR          string // "172.20.0.0/16"
	ServiceIPv6CIDR          string // only for IPFamily ipv6
	IPFamily                 string // "ipv4" (default) or "ipv6"
	RoleARN                  string
	VPC                      VPCConfig
	OIDCIssuer               string // default https://oidc.eks.REGION.amazonaws.com/id/<hex>
	AuthenticationMode       string // API, API_AND_CONFIG_MAP (default) or CONFIG_MAP
	SupportType              string // upgradePolicy: STANDARD (default) or EXTENDED
	EnabledLogTypes          []string
	DeletionProtection       bool
	CreatedAt                time.Time // default: when first set
	Tags                     map[string]string
}

var (
	namePattern = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$`)
	logTypes    = []string{"api", "audit", "authenticator", "controllerManager", "scheduler"}
)

// Model holds the account's clusters.
type Model struct {
	host account.Host

	mu       sync.Mutex
	clusters map[string]*Cluster
}

func newModel(host account.Host) (*Model, error) {
	m := &Model{host: host, clusters: map[string]*Cluster{}}
	err := account.LoadJSON(host.Store(), bucket, func(k string, c *Cluster) { m.clusters[k] = c })
	if err != nil {
		return nil, fmt.Errorf("eks: loading %s: %w", bucket, err)
	}
	return m, nil
}

// ARN is the cluster's ARN in the host's region and account.
func (m *Model) ARN(name string) string {
	return fmt.Sprintf("arn:aws:eks:%s:%s:cluster/%s", m.host.Region(), m.host.AccountID(), name)
}

// normalize validates c and fills what AWS always reports.
func (m *Model) normalize(c *Cluster, old *Cluster) error {
	if !namePattern.MatchString(c.Name) {
		return fmt.Errorf("eks: cluster name %q must match %s", c.Name, namePattern)
	}
	if c.Endpoint == "" || c.CertificateAuthorityData == "" || c.Version == "" || c.RoleARN == "" {
		return fmt.Errorf("eks: cluster %s needs an endpoint, CA data, version and role ARN", c.Name)
	}
	defaults := []struct {
		field *string
		value string
	}{
		{&c.Status, "ACTIVE"}, {&c.IPFamily, "ipv4"}, {&c.AuthenticationMode, "API_AND_CONFIG_MAP"},
		{&c.SupportType, "STANDARD"}, {&c.PlatformVersion, "eks.1"},
		{&c.OIDCIssuer, fmt.Sprintf("https://oidc.eks.%s.amazonaws.com/id/%s", m.host.Region(), oidcID(c.Name))},
	}
	for _, d := range defaults {
		if *d.field == "" {
			*d.field = d.value
		}
	}
	switch {
	case c.IPFamily == "ipv4" && c.ServiceIPv4CIDR == "":
		return fmt.Errorf("eks: cluster %s: an ipv4 cluster needs a service IPv4 CIDR", c.Name)
	case c.IPFamily == "ipv6" && c.ServiceIPv6CIDR == "":
		return fmt.Errorf("eks: cluster %s: an ipv6 cluster needs a service IPv6 CIDR", c.Name)
	case c.IPFamily != "ipv4" && c.IPFamily != "ipv6":
		return fmt.Errorf("eks: cluster %s: ip family %q is not ipv4 or ipv6", c.Name, c.IPFamily)
	}
	if c.VPC.EndpointPublicAccess && len(c.VPC.PublicAccessCIDRs) == 0 {
		c.VPC.PublicAccessCIDRs = []string{"0.0.0.0/0"}
	}
	for _, t := range c.EnabledLogTypes {
		if !contains(logTypes, t) {
			return fmt.Errorf("eks: cluster %s: log type %q is not one of %v", c.Name, t, logTypes)
		}
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = m.host.Now()
		if old != nil {
			c.CreatedAt = old.CreatedAt
		}
	}
	c.CreatedAt = c.CreatedAt.UTC().Truncate(time.Millisecond)
	return nil
}

// oidcID is the stable 32-hex-digit ID of a cluster's OIDC issuer.
func oidcID(name string) string {
	var h uint64 = 14695981039346656037
	out := make([]byte, 0, 32)
	for len(out) < 32 {
		for i := 0; i < len(name); i++ {
			h = (h ^ uint64(name[i])) * 1099511628211
		}
		h = (h ^ uint64(len(out))) * 1099511628211
		out = fmt.Appendf(out, "%016X", h)
	}
	return string(out[:32])
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// clone deep-copies c so callers never share the model's slices and maps.
func clone(c *Cluster) *Cluster {
	out := *c
	out.VPC.SubnetIDs = append([]string(nil), c.VPC.SubnetIDs...)
	out.VPC.SecurityGroupIDs = append([]string(nil), c.VPC.SecurityGroupIDs...)
	out.VPC.PublicAccessCIDRs = append([]string(nil), c.VPC.PublicAccessCIDRs...)
	out.EnabledLogTypes = append([]string(nil), c.EnabledLogTypes...)
	out.Tags = make(map[string]string, len(c.Tags))
	for k, v := range c.Tags {
		out.Tags[k] = v
	}
	return &out
}

// Set creates or replaces a cluster and waits until it is durable.
func (m *Model) Set(c Cluster) error {
	nc := clone(&c)
	m.mu.Lock()
	if err := m.normalize(nc, m.clusters[nc.Name]); err != nil {
		m.mu.Unlock()
		return err
	}
	m.clusters[nc.Name] = nc
	done := m.host.Store().Enqueue(account.Op{Bucket: bucket, Key: nc.Name, Value: nc})
	m.mu.Unlock()
	if err := <-done; err != nil {
		return fmt.Errorf("eks: storing cluster %s: %w", nc.Name, err)
	}
	return nil
}

// Remove deletes a cluster; false when there was none.
func (m *Model) Remove(name string) (bool, error) {
	m.mu.Lock()
	if _, ok := m.clusters[name]; !ok {
		m.mu.Unlock()
		return false, nil
	}
	delete(m.clusters, name)
	done := m.host.Store().Enqueue(account.Op{Bucket: bucket, Key: name})
	m.mu.Unlock()
	if err := <-done; err != nil {
		return true, fmt.Errorf("eks: removing cluster %s: %w", name, err)
	}
	return true, nil
}

// Get returns a copy of the named cluster.
func (m *Model) Get(name string) (*Cluster, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.clusters[name]
	if !ok {
		return nil, false
	}
	return clone(c), true
}

// Names lists the clusters' names, sorted.
func (m *Model) Names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.clusters))
	for n := range m.clusters {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// LogTypes are the control-plane log types a cluster reports, enabled first.
func LogTypes(c *Cluster) (enabled, disabled []string) {
	for _, t := range logTypes {
		if contains(c.EnabledLogTypes, t) {
			enabled = append(enabled, t)
		} else {
			disabled = append(disabled, t)
		}
	}
	return enabled, disabled
}

package eks

import "github.com/karplab/karplab/fakeec2/account"

// clusterOut is DescribeCluster's cluster as an ACTIVE, non-Auto-Mode cluster answers it.
type clusterOut struct {
	Name                      string            `json:"name"`
	ARN                       string            `json:"arn"`
	CreatedAt                 float64           `json:"createdAt"`
	Version                   string            `json:"version"`
	Endpoint                  string            `json:"endpoint"`
	RoleARN                   string            `json:"roleArn"`
	ResourcesVPCConfig        vpcOut            `json:"resourcesVpcConfig"`
	KubernetesNetworkConfig   networkOut        `json:"kubernetesNetworkConfig"`
	Logging                   loggingOut        `json:"logging"`
	Identity                  identityOut       `json:"identity"`
	Status                    string            `json:"status"`
	CertificateAuthority      certificateOut    `json:"certificateAuthority"`
	PlatformVersion           string            `json:"platformVersion"`
	Tags                      map[string]string `json:"tags"`
	Health                    healthOut         `json:"health"`
	AccessConfig              accessOut         `json:"accessConfig"`
	UpgradePolicy             upgradeOut        `json:"upgradePolicy"`
	DeletionProtection        bool              `json:"deletionProtection"`
	ControlPlaneScalingConfig scalingOut        `json:"controlPlaneScalingConfig"`
}

type vpcOut struct {
	SubnetIDs              []string `json:"subnetIds"`
	SecurityGroupIDs       []string `json:"securityGroupIds"`
	ClusterSecurityGroupID string   `json:"clusterSecurityGroupId,omitempty"`
	VPCID                  string   `json:"vpcId,omitempty"`
	EndpointPublicAccess   bool     `json:"endpointPublicAccess"`
	EndpointPrivateAccess  bool     `json:"endpointPrivateAccess"`
	PublicAccessCIDRs      []string `json:"publicAccessCidrs"`
}

type networkOut struct {
	ServiceIPv4CIDR      string `json:"serviceIpv4Cidr,omitempty"`
	ServiceIPv6CIDR      string `json:"serviceIpv6Cidr,omitempty"`
	IPFamily             string `json:"ipFamily"`
	ElasticLoadBalancing struct {
		Enabled bool `json:"enabled"`
	} `json:"elasticLoadBalancing"`
}

type logSetupOut struct {
	Types   []string `json:"types"`
	Enabled bool     `json:"enabled"`
}

type loggingOut struct {
	ClusterLogging []logSetupOut `json:"clusterLogging"`
}

type identityOut struct {
	OIDC struct {
		Issuer string `json:"issuer"`
	} `json:"oidc"`
}

type certificateOut struct {
	Data string `json:"data"`
}

type healthOut struct {
	Issues []struct{} `json:"issues"`
}

type accessOut struct {
	AuthenticationMode string `json:"authenticationMode"`
}

type upgradeOut struct {
	SupportType string `json:"supportType"`
}

type scalingOut struct {
	Tier string `json:"tier"`
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Service) encode(c *Cluster) *clusterOut {
	out := &clusterOut{
		Name: c.Name, ARN: s.model.ARN(c.Name), CreatedAt: account.EpochSeconds(c.CreatedAt),
		Version: c.Version, Endpoint: c.Endpoint, RoleARN: c.RoleARN, Status: c.Status,
		PlatformVersion: c.PlatformVersion, Tags: c.Tags,
		ResourcesVPCConfig: vpcOut{
			SubnetIDs: nonNil(c.VPC.SubnetIDs), SecurityGroupIDs: nonNil(c.VPC.SecurityGroupIDs),
			ClusterSecurityGroupID: c.VPC.ClusterSecurityGroupID, VPCID: c.VPC.VPCID,
			EndpointPublicAccess: c.VPC.EndpointPublicAccess, EndpointPrivateAccess: c.VPC.EndpointPrivateAccess,
			PublicAccessCIDRs: nonNil(c.VPC.PublicAccessCIDRs),
		},
		KubernetesNetworkConfig: networkOut{ServiceIPv4CIDR: c.ServiceIPv4CIDR, ServiceIPv6CIDR: c.ServiceIPv6CIDR,
			IPFamily: c.IPFamily},
		CertificateAuthority:      certificateOut{Data: c.CertificateAuthorityData},
		Health:                    healthOut{Issues: []struct{}{}},
		AccessConfig:              accessOut{AuthenticationMode: c.AuthenticationMode},
		UpgradePolicy:             upgradeOut{SupportType: c.SupportType},
		DeletionProtection:        c.DeletionProtection,
		ControlPlaneScalingConfig: scalingOut{Tier: "standard"},
	}
	if out.Tags == nil {
		out.Tags = map[string]string{}
	}
	out.Identity.OIDC.Issuer = c.OIDCIssuer
	enabled, disabled := LogTypes(c)
	if len(enabled) > 0 {
		out.Logging.ClusterLogging = append(out.Logging.ClusterLogging, logSetupOut{Types: enabled, Enabled: true})
	}
	if len(disabled) > 0 {
		out.Logging.ClusterLogging = append(out.Logging.ClusterLogging, logSetupOut{Types: disabled, Enabled: false})
	}
	return out
}

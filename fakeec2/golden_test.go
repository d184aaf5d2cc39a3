package fakeec2_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/account"
)

// TestGoldenResponses pins the XML of a few responses, byte for byte. IDs and times are
// stable through the fake clock and the sequential ID generator; -update rewrites them.
func TestGoldenResponses(t *testing.T) {
	srv, err := fakeec2.New(fakeec2.Options{Clock: fakeec2.NewFakeClock(t0), IDs: account.NewSequentialIDs(), BootDelay: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	post := func(form url.Values) []byte {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAGOLDEN/20261102/eu-west-2/ec2/aws4_request, SignedHeaders=host, Signature=00")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	// Sequential IDs make the seeded resources predictable: vpc 1, subnets 1-3, sg 1-2, amis.
	subnetA := "subnet-00000000000000001"
	steps := []struct {
		name string
		form url.Values
	}{
		{"describe-subnets", url.Values{"Action": {"DescribeSubnets"}, "Version": {"2016-11-15"},
			"Filter.1.Name": {"availability-zone"}, "Filter.1.Value.1": {"eu-west-2a"}}},
		{"create-launch-template", url.Values{"Action": {"CreateLaunchTemplate"}, "Version": {"2016-11-15"},
			"LaunchTemplateName": {"golden"}, "LaunchTemplateData.ImageId": {"ami-0000000000000000b"},
			"LaunchTemplateData.BlockDeviceMapping.1.DeviceName":     {"/dev/xvda"},
			"LaunchTemplateData.BlockDeviceMapping.1.Ebs.VolumeSize": {"80"},
			"LaunchTemplateData.BlockDeviceMapping.1.Ebs.VolumeType": {"gp3"},
			"LaunchTemplateData.BlockDeviceMapping.1.Ebs.Encrypted":  {"true"},
			"LaunchTemplateData.MetadataOptions.HttpTokens":          {"required"},
			"LaunchTemplateData.TagSpecification.1.ResourceType":     {"instance"},
			"LaunchTemplateData.TagSpecification.1.Tag.1.Key":        {"application"},
			"LaunchTemplateData.TagSpecification.1.Tag.1.Value":      {"ziba"}}},
		{"create-fleet", url.Values{"Action": {"CreateFleet"}, "Version": {"2016-11-15"}, "Type": {"instant"},
			"LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateName": {"golden"},
			"LaunchTemplateConfigs.1.LaunchTemplateSpecification.Version":            {"$Latest"},
			"LaunchTemplateConfigs.1.Overrides.1.InstanceType":                       {"m6i.large"},
			"LaunchTemplateConfigs.1.Overrides.1.SubnetId":                           {subnetA},
			"LaunchTemplateConfigs.1.Overrides.2.InstanceType":                       {"c6i.large"},
			"LaunchTemplateConfigs.1.Overrides.2.SubnetId":                           {subnetA},
			"TargetCapacitySpecification.TotalTargetCapacity":                        {"1"},
			"TargetCapacitySpecification.DefaultTargetCapacityType":                  {"spot"},
			"TagSpecification.1.ResourceType":                                        {"instance"},
			"TagSpecification.1.Tag.1.Key":                                           {"karpenter.sh/nodepool"},
			"TagSpecification.1.Tag.1.Value":                                         {"ziba-general"}}},
		{"describe-instances", url.Values{"Action": {"DescribeInstances"}, "Version": {"2016-11-15"},
			"Filter.1.Name": {"tag:karpenter.sh/nodepool"}, "Filter.1.Value.1": {"ziba-general"}}},
		{"error-invalid-action", url.Values{"Action": {"LaunchRocket"}, "Version": {"2016-11-15"}}},
		{"error-instance-not-found", url.Values{"Action": {"TerminateInstances"}, "Version": {"2016-11-15"}, "InstanceId.1": {"i-0123456789abcdef0"}}},
	}
	for _, st := range steps {
		got := post(st.form)
		karplabtest.Golden(t, filepath.Join("testdata", "golden", st.name+".xml"), got)
		if !bytes.HasPrefix(got, []byte("<?xml")) {
			t.Errorf("%s: no XML header", st.name)
		}
	}
}

package fakeec2

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// FuzzParseQuery feeds arbitrary form bodies to the parser and then to the whole server:
// the parser must agree with url.ParseQuery on every value it accepts, and no request may
// panic or answer anything but EC2 XML (no InternalError).
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		"Action=DescribeInstances&Filter.1.Name=tag%3Aa&Filter.1.Value.1=b&MaxResults=5",
		"Action=RunInstances&ImageId=ami-0000000000000000b&InstanceType=m5.large&MinCount=1&MaxCount=2&TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=k",
		"Action=CreateFleet&Type=instant&LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateName=x&LaunchTemplateConfigs.1.Overrides.1.InstanceType=m5.large&TargetCapacitySpecification.TotalTargetCapacity=1",
		"Action=CreateLaunchTemplate&LaunchTemplateName=abc&LaunchTemplateData.ImageId=ami-0000000000000000b&LaunchTemplateData.BlockDeviceMapping.1.DeviceName=/dev/xvda&LaunchTemplateData.BlockDeviceMapping.1.Ebs.VolumeSize=80",
		"Action=TerminateInstances&InstanceId.1=i-00000000000000001",
		"Action=CreateTags&ResourceId.1=subnet-00000000000000001&Tag.1.Key=a&Tag.1.Value=b",
		"Action=DescribeSpotPriceHistory&StartTime=2026-11-02T09:00:00Z&NextToken=c2VxOjM",
		"InstanceId.0=a", "Filter..Name=x", "a.1=b&a.1.c=d", "%zz",
	} {
		f.Add(s)
	}
	srv, err := New(Options{Clock: NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)), IDs: account.NewSequentialIDs(), BootDelay: -1})
	if err != nil {
		f.Fatal(err)
	}
	defer srv.Close()
	f.Fuzz(func(t *testing.T, body string) {
		q, err := wire.ParseQueryString(body)
		if err == nil {
			form, _ := url.ParseQuery(body)
			for k, vs := range form {
				if got := q.Str(k); !q.Has(k) || got != vs[0] {
					t.Fatalf("key %q: parsed %q (present %v), form has %q", k, got, q.Has(k), vs[0])
				}
			}
		}
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		var root struct {
			XMLName xml.Name
			Errors  struct {
				Code string `xml:"Error>Code"`
			} `xml:"Errors"`
		}
		if err := xml.Unmarshal(rec.Body.Bytes(), &root); err != nil {
			t.Fatalf("answer is not XML: %v\n%s", err, rec.Body.String())
		}
		if rec.Code == http.StatusInternalServerError && root.Errors.Code == wire.CodeInternalError {
			t.Fatalf("InternalError for %q: %s", body, rec.Body.String())
		}
		if rec.Code == http.StatusOK && !strings.HasSuffix(root.XMLName.Local, "Response") {
			t.Fatalf("200 with root %q", root.XMLName.Local)
		}
	})
}

package wire

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/karplab/karplab/fakeec2/ec2"
)

func TestParseQuery(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr bool
		check   func(q *Query) any
		want    any
	}{
		{name: "list in index order, gaps allowed", body: "InstanceId.10=c&InstanceId.2=b&InstanceId.1=a",
			check: func(q *Query) any { return q.Strs("InstanceId") }, want: []string{"a", "b", "c"}},
		{name: "filters", body: "Filter.1.Name=tag%3Akarpenter.sh%2Fnodepool&Filter.1.Value.1=x&Filter.1.Value.2=y&Filter.2.Name=instance-state-name&Filter.2.Value.1=running",
			check: func(q *Query) any { fs, _ := q.Filters(); return fs },
			want:  []Filter{{Name: "tag:karpenter.sh/nodepool", Values: []string{"x", "y"}}, {Name: "instance-state-name", Values: []string{"running"}}}},
		{name: "nested overrides", body: "LaunchTemplateConfigs.1.Overrides.2.InstanceType=m5.large&LaunchTemplateConfigs.1.Overrides.1.InstanceType=c5.large",
			check: func(q *Query) any {
				var out []string
				for _, o := range q.List("LaunchTemplateConfigs")[0].List("Overrides") {
					out = append(out, o.Str("InstanceType"))
				}
				return out
			}, want: []string{"c5.large", "m5.large"}},
		{name: "tag specs", body: "TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=a&TagSpecification.1.Tag.1.Value=1&TagSpecification.1.Tag.2.Key=b",
			check: func(q *Query) any { ts, _ := q.TagSpecs("TagSpecification"); return ts },
			want:  []ec2.TagSpec{{ResourceType: "instance", Tags: []ec2.Tag{{Key: "a", Value: "1"}, {Key: "b", Value: ""}}}}},
		{name: "zero index", body: "InstanceId.0=a", wantErr: true},
		{name: "leading zero index", body: "InstanceId.01=a", wantErr: true},
		{name: "empty segment", body: "Filter..Name=a", wantErr: true},
		{name: "value and structure", body: "Filter.1=a&Filter.1.Name=b", wantErr: true},
		{name: "bad escape", body: "Action=%zz", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQueryString(tt.body)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, tt.check(q)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

package ssm_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/account/accounttest"
	"github.com/karplab/karplab/fakeec2/ssm"
)

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func fixedHost() *account.MemoryHost {
	h := account.NewMemoryHost()
	h.Clock = func() time.Time { return t0 }
	return h
}

var ignoreMeta = cmpopts.IgnoreUnexported(types.Parameter{})

func TestGetParameterShape(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, fixedHost())
	put(t, c, "/karplab/cluster/name", "ziba-production", types.ParameterTypeString, false)
	put(t, c, "plain", "a,b", types.ParameterTypeStringList, false)
	put(t, c, "/karplab/secret", "hunter2", types.ParameterTypeSecureString, false)
	put(t, c, "/karplab/cluster/name", "ziba-staging", "", true)
	if _, err := c.PutParameter(ctx, &sdk.PutParameterInput{Name: aws.String("/karplab/golden-ami"),
		Value: aws.String("ami-0123456789abcdef0"), Type: types.ParameterTypeString, DataType: aws.String("aws:ec2:image")}); err != nil {
		t.Fatalf("PutParameter aws:ec2:image: %v", err)
	}
	arn := func(n string) *string { return aws.String("arn:aws:ssm:eu-west-2:123456789012:parameter/" + n) }
	tests := []struct {
		name    string
		in      sdk.GetParameterInput
		want    types.Parameter
		checkOK func(v string) bool // for sealed values
	}{
		{name: "latest version", in: sdk.GetParameterInput{Name: aws.String("/karplab/cluster/name")},
			want: types.Parameter{Name: aws.String("/karplab/cluster/name"), Type: types.ParameterTypeString,
				Value: aws.String("ziba-staging"), Version: 2, LastModifiedDate: aws.Time(t0),
				ARN: arn("karplab/cluster/name"), DataType: aws.String("text")}},
		{name: "version selector", in: sdk.GetParameterInput{Name: aws.String("/karplab/cluster/name:1")},
			want: types.Parameter{Name: aws.String("/karplab/cluster/name"), Type: types.ParameterTypeString,
				Value: aws.String("ziba-production"), Version: 1, Selector: aws.String(":1"), LastModifiedDate: aws.Time(t0),
				ARN: arn("karplab/cluster/name"), DataType: aws.String("text")}},
		{name: "by arn", in: sdk.GetParameterInput{Name: arn("karplab/cluster/name")},
			want: types.Parameter{Name: aws.String("/karplab/cluster/name"), Type: types.ParameterTypeString,
				Value: aws.String("ziba-staging"), Version: 2, LastModifiedDate: aws.Time(t0),
				ARN: arn("karplab/cluster/name"), DataType: aws.String("text")}},
		{name: "name without a slash", in: sdk.GetParameterInput{Name: aws.String("plain")},
			want: types.Parameter{Name: aws.String("plain"), Type: types.ParameterTypeStringList,
				Value: aws.String("a,b"), Version: 1, LastModifiedDate: aws.Time(t0), ARN: arn("plain"), DataType: aws.String("text")}},
		{name: "secure string decrypted", in: sdk.GetParameterInput{Name: aws.String("/karplab/secret"), WithDecryption: aws.Bool(true)},
			want: types.Parameter{Name: aws.String("/karplab/secret"), Type: types.ParameterTypeSecureString,
				Value: aws.String("hunter2"), Version: 1, LastModifiedDate: aws.Time(t0), ARN: arn("karplab/secret"), DataType: aws.String("text")}},
		{name: "secure string sealed", in: sdk.GetParameterInput{Name: aws.String("/karplab/secret")},
			want: types.Parameter{Name: aws.String("/karplab/secret"), Type: types.ParameterTypeSecureString,
				Version: 1, LastModifiedDate: aws.Time(t0), ARN: arn("karplab/secret"), DataType: aws.String("text")},
			checkOK: func(v string) bool { return v != "" && v != "hunter2" }},
		{name: "ami data type", in: sdk.GetParameterInput{Name: aws.String("/karplab/golden-ami")},
			want: types.Parameter{Name: aws.String("/karplab/golden-ami"), Type: types.ParameterTypeString,
				Value: aws.String("ami-0123456789abcdef0"), Version: 1, LastModifiedDate: aws.Time(t0),
				ARN: arn("karplab/golden-ami"), DataType: aws.String("aws:ec2:image")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := c.GetParameter(ctx, &tt.in)
			if err != nil {
				t.Fatalf("GetParameter: %v", err)
			}
			got := *out.Parameter
			if tt.checkOK != nil {
				if !tt.checkOK(aws.ToString(got.Value)) {
					t.Errorf("value %q is not sealed", aws.ToString(got.Value))
				}
				got.Value = nil
			}
			if diff := cmp.Diff(tt.want, got, ignoreMeta); diff != "" {
				t.Errorf("Parameter (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, fixedHost())
	put(t, c, "/app/db", "x", types.ParameterTypeString, false)
	tests := []struct {
		name   string
		call   func() error
		code   string
		status int
	}{
		{name: "get missing", code: "ParameterNotFound", status: 400, call: func() error {
			_, err := get(t, c, "/app/nope")
			return err
		}},
		{name: "get missing version", code: "ParameterVersionNotFound", status: 400, call: func() error {
			_, err := get(t, c, "/app/db:7")
			return err
		}},
		{name: "get missing label", code: "ParameterNotFound", status: 400, call: func() error {
			_, err := get(t, c, "/app/db:prod")
			return err
		}},
		{name: "get malformed name", code: "ValidationException", status: 400, call: func() error {
			_, err := get(t, c, "app/db")
			return err
		}},
		{name: "get name with a space", code: "ValidationException", status: 400, call: func() error {
			_, err := get(t, c, "/app/my db")
			return err
		}},
		{name: "put existing without overwrite", code: "ParameterAlreadyExists", status: 400, call: func() error {
			_, err := c.PutParameter(ctx, &sdk.PutParameterInput{Name: aws.String("/app/db"), Value: aws.String("y"), Type: types.ParameterTypeString})
			return err
		}},
		{name: "put without type", code: "ValidationException", status: 400, call: func() error {
			_, err := c.PutParameter(ctx, &sdk.PutParameterInput{Name: aws.String("/app/new"), Value: aws.String("y")})
			return err
		}},
		{name: "put bad type", code: "ValidationException", status: 400, call: func() error {
			_, err := c.PutParameter(ctx, &sdk.PutParameterInput{Name: aws.String("/app/new"), Value: aws.String("y"), Type: "Integer"})
			return err
		}},
		{name: "put under /aws/", code: "AccessDeniedException", status: 400, call: func() error {
			_, err := c.PutParameter(ctx, &sdk.PutParameterInput{Name: aws.String("/aws/service/mine"), Value: aws.String("y"), Type: types.ParameterTypeString})
			return err
		}},
		{name: "put aws-prefixed", code: "AccessDeniedException", status: 400, call: func() error {
			_, err := c.PutParameter(ctx, &sdk.PutParameterInput{Name: aws.String("aws-cdk-playground"), Value: aws.String("y"), Type: types.ParameterTypeString})
			return err
		}},
		{name: "put ssm-prefixed", code: "ValidationException", status: 400, call: func() error {
			_, err := c.PutParameter(ctx, &sdk.PutParameterInput{Name: aws.String("/SSM/x"), Value: aws.String("y"), Type: types.ParameterTypeString})
			return err
		}},
		{name: "put tags with overwrite", code: "ValidationException", status: 400, call: func() error {
			_, err := c.PutParameter(ctx, &sdk.PutParameterInput{Name: aws.String("/app/db"), Value: aws.String("y"), Overwrite: aws.Bool(true),
				Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}})
			return err
		}},
		{name: "put value too long for standard", code: "ValidationException", status: 400, call: func() error {
			_, err := c.PutParameter(ctx, &sdk.PutParameterInput{Name: aws.String("/app/big"), Value: aws.String(strings.Repeat("x", 4097)), Type: types.ParameterTypeString})
			return err
		}},
		{name: "put pattern mismatch", code: "ParameterPatternMismatchException", status: 400, call: func() error {
			_, err := c.PutParameter(ctx, &sdk.PutParameterInput{Name: aws.String("/app/port"), Value: aws.String("http"),
				Type: types.ParameterTypeString, AllowedPattern: aws.String(`\d+`)})
			return err
		}},
		{name: "put bad ami", code: "ValidationException", status: 400, call: func() error {
			_, err := c.PutParameter(ctx, &sdk.PutParameterInput{Name: aws.String("/app/ami"), Value: aws.String("not-an-ami"),
				Type: types.ParameterTypeString, DataType: aws.String("aws:ec2:image")})
			return err
		}},
		{name: "delete missing", code: "ParameterNotFound", status: 400, call: func() error {
			_, err := c.DeleteParameter(ctx, &sdk.DeleteParameterInput{Name: aws.String("/app/nope")})
			return err
		}},
		{name: "delete public", code: "AccessDeniedException", status: 400, call: func() error {
			_, err := c.DeleteParameter(ctx, &sdk.DeleteParameterInput{Name: aws.String("/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id")})
			return err
		}},
		{name: "by path max results over 10", code: "ValidationException", status: 400, call: func() error {
			_, err := c.GetParametersByPath(ctx, &sdk.GetParametersByPathInput{Path: aws.String("/app"), MaxResults: aws.Int32(11)})
			return err
		}},
		{name: "by path max results zero", code: "ValidationException", status: 400, call: func() error {
			_, err := c.GetParametersByPath(ctx, &sdk.GetParametersByPathInput{Path: aws.String("/app"), MaxResults: aws.Int32(0)})
			return err
		}},
		{name: "by path relative", code: "ValidationException", status: 400, call: func() error {
			_, err := c.GetParametersByPath(ctx, &sdk.GetParametersByPathInput{Path: aws.String("app")})
			return err
		}},
		{name: "by path bad token", code: "InvalidNextToken", status: 400, call: func() error {
			_, err := c.GetParametersByPath(ctx, &sdk.GetParametersByPathInput{Path: aws.String("/app"), NextToken: aws.String("bm9wZQ")})
			return err
		}},
		{name: "by path bad filter key", code: "InvalidFilterKey", status: 400, call: func() error {
			_, err := c.GetParametersByPath(ctx, &sdk.GetParametersByPathInput{Path: aws.String("/app"),
				ParameterFilters: []types.ParameterStringFilter{{Key: aws.String("Name"), Values: []string{"x"}}}})
			return err
		}},
		{name: "get parameters over 10 names", code: "ValidationException", status: 400, call: func() error {
			_, err := c.GetParameters(ctx, &sdk.GetParametersInput{Names: strings.Split("a b c d e f g h i j k", " ")})
			return err
		}},
		{name: "describe max results over 50", code: "ValidationException", status: 400, call: func() error {
			_, err := c.DescribeParameters(ctx, &sdk.DescribeParametersInput{MaxResults: aws.Int32(51)})
			return err
		}},
		{name: "history missing", code: "ParameterNotFound", status: 400, call: func() error {
			_, err := c.GetParameterHistory(ctx, &sdk.GetParameterHistoryInput{Name: aws.String("/app/nope")})
			return err
		}},
		{name: "label missing version", code: "ParameterVersionNotFound", status: 400, call: func() error {
			_, err := c.LabelParameterVersion(ctx, &sdk.LabelParameterVersionInput{Name: aws.String("/app/db"),
				ParameterVersion: aws.Int64(9), Labels: []string{"prod"}})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, status := accounttest.APIError(t, tt.call())
			if code != tt.code || status != tt.status {
				t.Errorf("got %s (%d), want %s (%d)", code, status, tt.code, tt.status)
			}
		})
	}
	if v, err := get(t, c, "/app/db"); err != nil || v != "x" {
		t.Errorf("after the failed calls /app/db = %q, %v; want x", v, err)
	}
}

func TestGetParameters(t *testing.T) {
	_, c := start(t, fixedHost())
	put(t, c, "/a/one", "1", types.ParameterTypeString, false)
	put(t, c, "/a/two", "2", types.ParameterTypeString, false)
	put(t, c, "/a/two", "2b", types.ParameterTypeString, true)
	out, err := c.GetParameters(context.Background(), &sdk.GetParametersInput{
		Names: []string{"/a/one", "/a/missing", "/a/two:1", "/a/two:5", "bad name"}})
	if err != nil {
		t.Fatalf("GetParameters: %v", err)
	}
	var got []string
	for _, p := range out.Parameters {
		got = append(got, aws.ToString(p.Name)+"="+aws.ToString(p.Value))
	}
	if diff := cmp.Diff([]string{"/a/one=1", "/a/two=2"}, got); diff != "" {
		t.Errorf("Parameters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/a/missing", "/a/two:5", "bad name"}, out.InvalidParameters); diff != "" {
		t.Errorf("InvalidParameters (-want +got):\n%s", diff)
	}
}

func TestGetParametersByPath(t *testing.T) {
	_, c := start(t, fixedHost())
	for _, n := range []string{"/app/a", "/app/b", "/app/sub/c", "/app/sub/deep/d", "/application/x", "/other/y", "root"} {
		put(t, c, n, "v"+n, types.ParameterTypeString, false)
	}
	put(t, c, "/app/s", "secret", types.ParameterTypeSecureString, false)
	tests := []struct {
		name      string
		in        sdk.GetParametersByPathInput
		want      []string
		wantPages int
	}{
		{name: "one level", in: sdk.GetParametersByPathInput{Path: aws.String("/app")},
			want: []string{"/app/a", "/app/b", "/app/s"}, wantPages: 1},
		{name: "trailing slash", in: sdk.GetParametersByPathInput{Path: aws.String("/app/")},
			want: []string{"/app/a", "/app/b", "/app/s"}, wantPages: 1},
		{name: "recursive", in: sdk.GetParametersByPathInput{Path: aws.String("/app"), Recursive: aws.Bool(true)},
			want: []string{"/app/a", "/app/b", "/app/s", "/app/sub/c", "/app/sub/deep/d"}, wantPages: 1},
		{name: "recursive in pages of two", in: sdk.GetParametersByPathInput{Path: aws.String("/app"), Recursive: aws.Bool(true), MaxResults: aws.Int32(2)},
			want: []string{"/app/a", "/app/b", "/app/s", "/app/sub/c", "/app/sub/deep/d"}, wantPages: 3},
		{name: "root one level", in: sdk.GetParametersByPathInput{Path: aws.String("/")},
			want: []string{"root"}, wantPages: 1},
		{name: "type filter", in: sdk.GetParametersByPathInput{Path: aws.String("/app"), Recursive: aws.Bool(true),
			ParameterFilters: []types.ParameterStringFilter{{Key: aws.String("Type"), Values: []string{"SecureString"}}}},
			want: []string{"/app/s"}, wantPages: 1},
		{name: "nothing under", in: sdk.GetParametersByPathInput{Path: aws.String("/none")}, want: nil, wantPages: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			pages := 0
			p := sdk.NewGetParametersByPathPaginator(c, &tt.in)
			for p.HasMorePages() {
				out, err := p.NextPage(context.Background())
				if err != nil {
					t.Fatalf("page %d: %v", pages, err)
				}
				pages++
				for _, prm := range out.Parameters {
					got = append(got, aws.ToString(prm.Name))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if pages != tt.wantPages {
				t.Errorf("pages = %d, want %d", pages, tt.wantPages)
			}
		})
	}
}

func TestHistoryAndLabels(t *testing.T) {
	ctx := context.Background()
	svc, c := start(t, fixedHost())
	for i, v := range []string{"one", "two", "three"} {
		if got := put(t, c, "/app/cfg", v, types.ParameterTypeString, i > 0); got != int64(i+1) {
			t.Fatalf("put %s: version %d, want %d", v, got, i+1)
		}
	}
	lab, err := c.LabelParameterVersion(ctx, &sdk.LabelParameterVersionInput{Name: aws.String("/app/cfg"),
		ParameterVersion: aws.Int64(1), Labels: []string{"prod", "1bad", "awsy"}})
	if err != nil {
		t.Fatalf("LabelParameterVersion: %v", err)
	}
	if diff := cmp.Diff([]string{"1bad", "awsy"}, lab.InvalidLabels); diff != "" || lab.ParameterVersion != 1 {
		t.Errorf("InvalidLabels (-want +got):\n%s version %d", diff, lab.ParameterVersion)
	}
	if v, err := get(t, c, "/app/cfg:prod"); err != nil || v != "one" {
		t.Errorf("/app/cfg:prod = %q, %v; want one", v, err)
	}
	// A label moves: latest version now.
	if _, err := c.LabelParameterVersion(ctx, &sdk.LabelParameterVersionInput{Name: aws.String("/app/cfg"), Labels: []string{"prod"}}); err != nil {
		t.Fatalf("LabelParameterVersion latest: %v", err)
	}
	if v, err := get(t, c, "/app/cfg:prod"); err != nil || v != "three" {
		t.Errorf("after the move /app/cfg:prod = %q, %v; want three", v, err)
	}
	h, err := c.GetParameterHistory(ctx, &sdk.GetParameterHistoryInput{Name: aws.String("/app/cfg")})
	if err != nil {
		t.Fatalf("GetParameterHistory: %v", err)
	}
	type entry struct {
		Version int64
		Value   string
		Labels  []string
	}
	var got []entry
	for _, p := range h.Parameters {
		got = append(got, entry{p.Version, aws.ToString(p.Value), p.Labels})
	}
	want := []entry{{1, "one", []string{}}, {2, "two", []string{}}, {3, "three", []string{"prod"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if p, ok := svc.Parameter("/app/cfg:prod"); !ok || p.Version != 3 || p.LastModifiedUser != "arn:aws:iam::123456789012:user/AKIDLAB" {
		t.Errorf("Parameter(/app/cfg:prod) = %+v, %v", p, ok)
	}
}

func TestDescribeParameters(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, fixedHost())
	put(t, c, "/app/a", "1", types.ParameterTypeString, false)
	put(t, c, "/app/sub/b", "2", types.ParameterTypeSecureString, false)
	if _, err := c.PutParameter(ctx, &sdk.PutParameterInput{Name: aws.String("/other/c"), Value: aws.String("3"),
		Type: types.ParameterTypeString, Description: aws.String("the c"), Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("core")}}}); err != nil {
		t.Fatalf("PutParameter: %v", err)
	}
	tests := []struct {
		name    string
		filters []types.ParameterStringFilter
		want    []string
	}{
		{name: "all", want: []string{"/app/a", "/app/sub/b", "/other/c"}},
		{name: "path one level", filters: []types.ParameterStringFilter{{Key: aws.String("Path"), Values: []string{"/app"}}},
			want: []string{"/app/a"}},
		{name: "path recursive", filters: []types.ParameterStringFilter{{Key: aws.String("Path"), Option: aws.String("Recursive"), Values: []string{"/app"}}},
			want: []string{"/app/a", "/app/sub/b"}},
		{name: "name begins with", filters: []types.ParameterStringFilter{{Key: aws.String("Name"), Option: aws.String("BeginsWith"), Values: []string{"/other"}}},
			want: []string{"/other/c"}},
		{name: "type", filters: []types.ParameterStringFilter{{Key: aws.String("Type"), Values: []string{"SecureString"}}},
			want: []string{"/app/sub/b"}},
		{name: "tag", filters: []types.ParameterStringFilter{{Key: aws.String("tag:team"), Values: []string{"core"}}},
			want: []string{"/other/c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			p := sdk.NewDescribeParametersPaginator(c, &sdk.DescribeParametersInput{ParameterFilters: tt.filters, MaxResults: aws.Int32(1)})
			for p.HasMorePages() {
				out, err := p.NextPage(ctx)
				if err != nil {
					t.Fatalf("DescribeParameters: %v", err)
				}
				for _, m := range out.Parameters {
					got = append(got, aws.ToString(m.Name))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
	out, err := c.DescribeParameters(ctx, &sdk.DescribeParametersInput{ParameterFilters: []types.ParameterStringFilter{
		{Key: aws.String("Name"), Values: []string{"/app/sub/b"}}}})
	if err != nil || len(out.Parameters) != 1 {
		t.Fatalf("DescribeParameters: %v, %d", err, len(out.Parameters))
	}
	m := out.Parameters[0]
	if aws.ToString(m.KeyId) != "alias/aws/ssm" || m.Tier != types.ParameterTierStandard || m.Version != 1 ||
		aws.ToString(m.ARN) != "arn:aws:ssm:eu-west-2:123456789012:parameter/app/sub/b" || !aws.ToTime(m.LastModifiedDate).Equal(t0) {
		t.Errorf("metadata = %+v", m)
	}
}

func TestPolicyDenial(t *testing.T) {
	ctx := context.Background()
	host := fixedHost()
	svc, c := start(t, host)
	put(t, c, "/app/locked", "v", types.ParameterTypeString, false)
	var asked []string
	host.Policy = func(caller, action, resource string) string {
		asked = append(asked, action+" "+resource)
		if action == "ssm:PutParameter" || action == "ssm:DeleteParameter" || strings.HasSuffix(resource, "/locked") {
			return "denied by the lab's policy"
		}
		return ""
	}
	tests := []struct {
		name string
		call func() error
	}{
		{name: "put", call: func() error {
			_, err := c.PutParameter(ctx, &sdk.PutParameterInput{Name: aws.String("/app/new"), Value: aws.String("v"), Type: types.ParameterTypeString})
			return err
		}},
		{name: "overwrite", call: func() error {
			_, err := c.PutParameter(ctx, &sdk.PutParameterInput{Name: aws.String("/app/locked"), Value: aws.String("w"), Overwrite: aws.Bool(true)})
			return err
		}},
		{name: "delete", call: func() error {
			_, err := c.DeleteParameter(ctx, &sdk.DeleteParameterInput{Name: aws.String("/app/locked")})
			return err
		}},
		{name: "get", call: func() error {
			_, err := get(t, c, "/app/locked")
			return err
		}},
		{name: "get parameters", call: func() error {
			_, err := c.GetParameters(ctx, &sdk.GetParametersInput{Names: []string{"/app/other", "/app/locked"}})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, status := accounttest.APIError(t, tt.call()); code != "AccessDeniedException" || status != http.StatusBadRequest {
				t.Errorf("got %s (%d), want AccessDeniedException (400)", code, status)
			}
		})
	}
	if !contains(asked, "ssm:GetParameter arn:aws:ssm:eu-west-2:123456789012:parameter/app/locked") {
		t.Errorf("policy was not asked about the parameter's ARN: %q", asked)
	}
	if got := svc.Parameters(); len(got) != 1 || got[0].Name != "/app/locked" || got[0].Value != "v" || got[0].Version != 1 {
		t.Errorf("after the denials the parameters are %+v", got)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestRestartAndReset(t *testing.T) {
	host := fixedHost()
	svc, c := start(t, host)
	put(t, c, "/app/keep", "1", types.ParameterTypeString, false)
	put(t, c, "/app/keep", "2", types.ParameterTypeString, true)
	put(t, c, "/app/gone", "x", types.ParameterTypeString, false)
	if _, err := c.DeleteParameter(context.Background(), &sdk.DeleteParameterInput{Name: aws.String("/app/gone")}); err != nil {
		t.Fatalf("DeleteParameter: %v", err)
	}
	if err := svc.SetEKSImages([]ssm.EKSImage{{Family: "al2023", Arch: "x86_64", Variant: "standard",
		KubernetesMinor: "1.37", Release: "v20261101", ImageID: "ami-0aaaaaaaaaaaaaaaa"}}); err != nil {
		t.Fatalf("SetEKSImages: %v", err)
	}

	svc2, c2 := start(t, &account.MemoryHost{RegionName: "eu-west-2", Account: "123456789012", Records: host.Records})
	if v, err := get(t, c2, "/app/keep:1"); err != nil || v != "1" {
		t.Errorf("after restart /app/keep:1 = %q, %v", v, err)
	}
	if v, err := get(t, c2, "/app/keep"); err != nil || v != "2" {
		t.Errorf("after restart /app/keep = %q, %v", v, err)
	}
	if code, _ := accounttest.APIError(t, func() error { _, err := get(t, c2, "/app/gone"); return err }()); code != "ParameterNotFound" {
		t.Errorf("after restart /app/gone: %s, want ParameterNotFound", code)
	}
	if got := svc2.PublicNames(); len(got) != 0 {
		t.Errorf("public parameters survived a restart (fakeec2 republishes them): %q", got)
	}
	if got := put(t, c2, "/app/keep", "3", types.ParameterTypeString, true); got != 3 {
		t.Errorf("version after restart = %d, want 3", got)
	}

	if err := svc.Reset(); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	if got := svc.Parameters(); len(got) != 0 {
		t.Errorf("after Reset: %+v", got)
	}
	if _, ok := svc.Parameter("/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id"); !ok {
		t.Errorf("Reset dropped a public parameter")
	}
	svc3, _ := start(t, &account.MemoryHost{RegionName: "eu-west-2", Account: "123456789012", Records: host.Records})
	if got := svc3.Parameters(); len(got) != 0 {
		t.Errorf("after Reset and restart: %+v", got)
	}
}

package iam_test

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/account/accounttest"
	"github.com/karplab/karplab/fakeec2/iam"
)

const (
	nodeRole   = "KarpenterNodeRole-ziba-production"
	clusterDir = "/karpenter/eu-west-2/ziba-production/"
)

// start serves a new IAM over host on a real listener and returns it with an SDK client.
func start(t *testing.T, host *account.MemoryHost) (*iam.Service, *sdk.Client) {
	t.Helper()
	svc, err := iam.New(host, iam.Options{})
	if err != nil {
		t.Fatalf("iam.New: %v", err)
	}
	return svc, sdk.NewFromConfig(accounttest.Config(t, accounttest.Start(t, svc, host), accounttest.AccessKey))
}

func tags(kv ...string) []types.Tag {
	var out []types.Tag
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
	}
	return out
}

func tagMap(ts []types.Tag) map[string]string {
	out := map[string]string{}
	for _, t := range ts {
		out[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return out
}

func createProfile(t *testing.T, c *sdk.Client, name, path string) *types.InstanceProfile {
	t.Helper()
	out, err := c.CreateInstanceProfile(context.Background(), &sdk.CreateInstanceProfileInput{
		InstanceProfileName: aws.String(name), Path: aws.String(path)})
	if err != nil {
		t.Fatalf("CreateInstanceProfile %s: %v", name, err)
	}
	return out.InstanceProfile
}

// TestKarpenterFlow walks what Karpenter's instance profile provider and its garbage
// collector do, in order, each step checking the answer it reads.
func TestKarpenterFlow(t *testing.T) {
	host := account.NewMemoryHost()
	svc, c := start(t, host)
	ctx := context.Background()
	name := "ziba-production_123456"
	path := clusterDir + "uid-1/"
	steps := []struct {
		name     string
		call     func() error
		wantCode string
		wantHTTP int
	}{
		{name: "get before create is not found", wantCode: "NoSuchEntity", wantHTTP: 404, call: func() error {
			_, err := c.GetInstanceProfile(ctx, &sdk.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
			return err
		}},
		{name: "create with path and tags", call: func() error {
			out, err := c.CreateInstanceProfile(ctx, &sdk.CreateInstanceProfileInput{InstanceProfileName: aws.String(name),
				Path: aws.String(path), Tags: tags("karpenter.k8s.aws/ec2nodeclass", "default", "kubernetes.io/cluster/ziba-production", "owned")})
			if err != nil {
				return err
			}
			p := out.InstanceProfile
			if got, want := aws.ToString(p.Arn), "arn:aws:iam::123456789012:instance-profile"+path+name; got != want {
				t.Errorf("Arn = %q, want %q", got, want)
			}
			if id := aws.ToString(p.InstanceProfileId); !strings.HasPrefix(id, "AIPA") || len(id) != 21 {
				t.Errorf("InstanceProfileId = %q, want AIPA and 17 characters", id)
			}
			if p.CreateDate == nil || p.CreateDate.IsZero() || len(p.Roles) != 0 {
				t.Errorf("CreateDate %v, Roles %v: want a date and no role", p.CreateDate, p.Roles)
			}
			return nil
		}},
		{name: "create again already exists", wantCode: "EntityAlreadyExists", wantHTTP: 409, call: func() error {
			_, err := c.CreateInstanceProfile(ctx, &sdk.CreateInstanceProfileInput{InstanceProfileName: aws.String(strings.ToUpper(name))})
			return err
		}},
		{name: "add the node role", call: func() error {
			_, err := c.AddRoleToInstanceProfile(ctx, &sdk.AddRoleToInstanceProfileInput{
				InstanceProfileName: aws.String(name), RoleName: aws.String(nodeRole)})
			return err
		}},
		{name: "get shows the role and tags", call: func() error {
			out, err := c.GetInstanceProfile(ctx, &sdk.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
			if err != nil {
				return err
			}
			p := out.InstanceProfile
			if len(p.Roles) != 1 || aws.ToString(p.Roles[0].RoleName) != nodeRole ||
				aws.ToString(p.Roles[0].Arn) != "arn:aws:iam::123456789012:role/"+nodeRole {
				t.Errorf("Roles = %+v, want only %s", p.Roles, nodeRole)
			}
			want := map[string]string{"karpenter.k8s.aws/ec2nodeclass": "default", "kubernetes.io/cluster/ziba-production": "owned"}
			if d := cmp.Diff(want, tagMap(p.Tags)); d != "" {
				t.Errorf("tags (-want +got):\n%s", d)
			}
			return nil
		}},
		{name: "a second role exceeds the limit", wantCode: "LimitExceeded", wantHTTP: 409, call: func() error {
			_, err := c.AddRoleToInstanceProfile(ctx, &sdk.AddRoleToInstanceProfileInput{
				InstanceProfileName: aws.String(name), RoleName: aws.String("KarpenterControllerRole-ziba-production")})
			return err
		}},
		{name: "delete with a role conflicts", wantCode: "DeleteConflict", wantHTTP: 409, call: func() error {
			_, err := c.DeleteInstanceProfile(ctx, &sdk.DeleteInstanceProfileInput{InstanceProfileName: aws.String(name)})
			return err
		}},
		{name: "tag, then untag", call: func() error {
			if _, err := c.TagInstanceProfile(ctx, &sdk.TagInstanceProfileInput{InstanceProfileName: aws.String(name),
				Tags: tags("karpenter.k8s.aws/ec2nodeclass", "other", "team", "a")}); err != nil {
				return err
			}
			if _, err := c.UntagInstanceProfile(ctx, &sdk.UntagInstanceProfileInput{InstanceProfileName: aws.String(name),
				TagKeys: []string{"kubernetes.io/cluster/ziba-production", "absent"}}); err != nil {
				return err
			}
			out, err := c.ListInstanceProfileTags(ctx, &sdk.ListInstanceProfileTagsInput{InstanceProfileName: aws.String(name)})
			if err != nil {
				return err
			}
			if d := cmp.Diff(map[string]string{"karpenter.k8s.aws/ec2nodeclass": "other", "team": "a"}, tagMap(out.Tags)); d != "" || out.IsTruncated {
				t.Errorf("tags (-want +got):\n%s truncated %v", d, out.IsTruncated)
			}
			return nil
		}},
		{name: "listed for its role", call: func() error {
			out, err := c.ListInstanceProfilesForRole(ctx, &sdk.ListInstanceProfilesForRoleInput{RoleName: aws.String(nodeRole)})
			if err != nil {
				return err
			}
			if len(out.InstanceProfiles) != 1 || aws.ToString(out.InstanceProfiles[0].InstanceProfileName) != name {
				t.Errorf("profiles for role = %+v, want only %s", out.InstanceProfiles, name)
			}
			return nil
		}},
		{name: "removing a role it lacks is not found", wantCode: "NoSuchEntity", wantHTTP: 404, call: func() error {
			_, err := c.RemoveRoleFromInstanceProfile(ctx, &sdk.RemoveRoleFromInstanceProfileInput{
				InstanceProfileName: aws.String(name), RoleName: aws.String("KarpenterControllerRole-ziba-production")})
			return err
		}},
		{name: "remove the role", call: func() error {
			_, err := c.RemoveRoleFromInstanceProfile(ctx, &sdk.RemoveRoleFromInstanceProfileInput{
				InstanceProfileName: aws.String(name), RoleName: aws.String(nodeRole)})
			return err
		}},
		{name: "delete", call: func() error {
			_, err := c.DeleteInstanceProfile(ctx, &sdk.DeleteInstanceProfileInput{InstanceProfileName: aws.String(name)})
			return err
		}},
		{name: "delete again is not found", wantCode: "NoSuchEntity", wantHTTP: 404, call: func() error {
			_, err := c.DeleteInstanceProfile(ctx, &sdk.DeleteInstanceProfileInput{InstanceProfileName: aws.String(name)})
			return err
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			code, status := accounttest.APIError(t, st.call())
			if code != st.wantCode || status != st.wantHTTP {
				t.Fatalf("got %q (HTTP %d), want %q (HTTP %d)", code, status, st.wantCode, st.wantHTTP)
			}
		})
	}
	if ps := svc.Profiles(); len(ps) != 0 {
		t.Errorf("Profiles() = %+v after delete, want none", ps)
	}
}

func TestErrors(t *testing.T) {
	_, c := start(t, account.NewMemoryHost())
	ctx := context.Background()
	createProfile(t, c, "taken", "/")
	tests := []struct {
		name        string
		call        func() error
		wantCode    string
		wantHTTP    int
		wantMessage string // a substring
	}{
		{name: "unknown role", wantCode: "NoSuchEntity", wantHTTP: 404, wantMessage: "The role with name nope cannot be found",
			call: func() error {
				_, err := c.GetRole(ctx, &sdk.GetRoleInput{RoleName: aws.String("nope")})
				return err
			}},
		{name: "adding an unknown role names the role", wantCode: "NoSuchEntity", wantHTTP: 404, wantMessage: "role with name ghost",
			call: func() error {
				_, err := c.AddRoleToInstanceProfile(ctx, &sdk.AddRoleToInstanceProfileInput{
					InstanceProfileName: aws.String("taken"), RoleName: aws.String("ghost")})
				return err
			}},
		{name: "adding to an unknown profile", wantCode: "NoSuchEntity", wantHTTP: 404, wantMessage: "Instance Profile ghost cannot be found",
			call: func() error {
				_, err := c.AddRoleToInstanceProfile(ctx, &sdk.AddRoleToInstanceProfileInput{
					InstanceProfileName: aws.String("ghost"), RoleName: aws.String(nodeRole)})
				return err
			}},
		{name: "name with a space", wantCode: "ValidationError", wantHTTP: 400, wantMessage: "regular expression pattern",
			call: func() error {
				_, err := c.CreateInstanceProfile(ctx, &sdk.CreateInstanceProfileInput{InstanceProfileName: aws.String("bad name")})
				return err
			}},
		{name: "name too long", wantCode: "ValidationError", wantHTTP: 400, wantMessage: "less than or equal to 128",
			call: func() error {
				_, err := c.CreateInstanceProfile(ctx, &sdk.CreateInstanceProfileInput{InstanceProfileName: aws.String(strings.Repeat("a", 129))})
				return err
			}},
		{name: "empty name", wantCode: "ValidationError", wantHTTP: 400, wantMessage: "must not be null",
			call: func() error {
				_, err := c.GetInstanceProfile(ctx, &sdk.GetInstanceProfileInput{InstanceProfileName: aws.String("")})
				return err
			}},
		{name: "path without trailing slash", wantCode: "ValidationError", wantHTTP: 400, wantMessage: "path is invalid",
			call: func() error {
				_, err := c.CreateInstanceProfile(ctx, &sdk.CreateInstanceProfileInput{InstanceProfileName: aws.String("p"), Path: aws.String("/karpenter")})
				return err
			}},
		{name: "path prefix without leading slash", wantCode: "ValidationError", wantHTTP: 400,
			call: func() error {
				_, err := c.ListInstanceProfiles(ctx, &sdk.ListInstanceProfilesInput{PathPrefix: aws.String("karpenter/")})
				return err
			}},
		{name: "max items zero", wantCode: "ValidationError", wantHTTP: 400, wantMessage: "maxItems",
			call: func() error {
				_, err := c.ListInstanceProfiles(ctx, &sdk.ListInstanceProfilesInput{MaxItems: aws.Int32(0)})
				return err
			}},
		{name: "max items over 1000", wantCode: "ValidationError", wantHTTP: 400,
			call: func() error {
				_, err := c.ListRoles(ctx, &sdk.ListRolesInput{MaxItems: aws.Int32(1001)})
				return err
			}},
		{name: "bad marker", wantCode: "ValidationError", wantHTTP: 400,
			call: func() error {
				_, err := c.ListInstanceProfiles(ctx, &sdk.ListInstanceProfilesInput{Marker: aws.String("not-a-marker!")})
				return err
			}},
		{name: "duplicate tag keys", wantCode: "InvalidInput", wantHTTP: 400,
			call: func() error {
				_, err := c.TagInstanceProfile(ctx, &sdk.TagInstanceProfileInput{InstanceProfileName: aws.String("taken"),
					Tags: tags("Team", "a", "team", "b")})
				return err
			}},
		{name: "too many tags", wantCode: "LimitExceeded", wantHTTP: 409,
			call: func() error {
				var kv []string
				for i := 0; i < 51; i++ {
					kv = append(kv, "k"+strings.Repeat("x", i), "v")
				}
				_, err := c.TagInstanceProfile(ctx, &sdk.TagInstanceProfileInput{InstanceProfileName: aws.String("taken"), Tags: tags(kv...)})
				return err
			}},
		{name: "bad tag key", wantCode: "ValidationError", wantHTTP: 400,
			call: func() error {
				_, err := c.TagInstanceProfile(ctx, &sdk.TagInstanceProfileInput{InstanceProfileName: aws.String("taken"), Tags: tags("a*b", "v")})
				return err
			}},
		{name: "role with a malformed trust policy", wantCode: "MalformedPolicyDocument", wantHTTP: 400,
			call: func() error {
				_, err := c.CreateRole(ctx, &sdk.CreateRoleInput{RoleName: aws.String("r"), AssumeRolePolicyDocument: aws.String("{")})
				return err
			}},
		{name: "role that exists, in another case", wantCode: "EntityAlreadyExists", wantHTTP: 409,
			call: func() error {
				_, err := c.CreateRole(ctx, &sdk.CreateRoleInput{RoleName: aws.String(strings.ToLower(nodeRole)),
					AssumeRolePolicyDocument: aws.String(iam.EC2TrustPolicy)})
				return err
			}},
		{name: "role session too long", wantCode: "ValidationError", wantHTTP: 400,
			call: func() error {
				_, err := c.CreateRole(ctx, &sdk.CreateRoleInput{RoleName: aws.String("r"),
					AssumeRolePolicyDocument: aws.String(iam.EC2TrustPolicy), MaxSessionDuration: aws.Int32(50000)})
				return err
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			code, status := accounttest.APIError(t, err)
			if code != tt.wantCode || status != tt.wantHTTP {
				t.Fatalf("got %q (HTTP %d): %v; want %q (HTTP %d)", code, status, err, tt.wantCode, tt.wantHTTP)
			}
			if !strings.Contains(err.Error(), tt.wantMessage) {
				t.Errorf("message %q lacks %q", err.Error(), tt.wantMessage)
			}
		})
	}
}

func TestListInstanceProfilesPages(t *testing.T) {
	_, c := start(t, account.NewMemoryHost())
	ctx := context.Background()
	for _, n := range []string{"e", "a", "d", "c", "b"} {
		createProfile(t, c, "ip-"+n, clusterDir+n+"/")
	}
	createProfile(t, c, "ip-other", "/karpenter/eu-west-2/other-cluster/x/")
	createProfile(t, c, "ip-root", "/")

	tests := []struct {
		name      string
		prefix    *string
		maxItems  int32
		wantPages [][]string
	}{
		{name: "cluster prefix in pages of two", prefix: aws.String(clusterDir), maxItems: 2,
			wantPages: [][]string{{"ip-a", "ip-b"}, {"ip-c", "ip-d"}, {"ip-e"}}},
		{name: "cluster prefix at once", prefix: aws.String(clusterDir),
			wantPages: [][]string{{"ip-a", "ip-b", "ip-c", "ip-d", "ip-e"}}},
		{name: "no prefix lists all", maxItems: 4,
			wantPages: [][]string{{"ip-a", "ip-b", "ip-c", "ip-d"}, {"ip-e", "ip-other", "ip-root"}}},
		{name: "prefix matching nothing", prefix: aws.String("/nothing/"), wantPages: [][]string{{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &sdk.ListInstanceProfilesInput{PathPrefix: tt.prefix}
			if tt.maxItems > 0 {
				in.MaxItems = aws.Int32(tt.maxItems)
			}
			var got [][]string
			for {
				out, err := c.ListInstanceProfiles(ctx, in)
				if err != nil {
					t.Fatalf("ListInstanceProfiles: %v", err)
				}
				page := []string{}
				for _, p := range out.InstanceProfiles {
					page = append(page, aws.ToString(p.InstanceProfileName))
					if p.Tags != nil {
						t.Errorf("listed profile %s carries tags; AWS lists none", aws.ToString(p.InstanceProfileName))
					}
				}
				got = append(got, page)
				if out.IsTruncated != (out.Marker != nil) {
					t.Fatalf("IsTruncated %v with Marker %v", out.IsTruncated, out.Marker)
				}
				if !out.IsTruncated {
					break
				}
				in.Marker = out.Marker
			}
			if d := cmp.Diff(tt.wantPages, got); d != "" {
				t.Errorf("pages (-want +got):\n%s", d)
			}
		})
	}

	t.Run("the SDK paginator as Karpenter uses it", func(t *testing.T) {
		p := sdk.NewListInstanceProfilesPaginator(c, &sdk.ListInstanceProfilesInput{PathPrefix: aws.String(clusterDir)},
			func(o *sdk.ListInstanceProfilesPaginatorOptions) { o.Limit = 2 })
		var names []string
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				t.Fatalf("NextPage: %v", err)
			}
			for _, ip := range out.InstanceProfiles {
				names = append(names, aws.ToString(ip.InstanceProfileName))
			}
		}
		if d := cmp.Diff([]string{"ip-a", "ip-b", "ip-c", "ip-d", "ip-e"}, names); d != "" {
			t.Errorf("names (-want +got):\n%s", d)
		}
	})
}

// recorder is a policy that denies one action and remembers every question asked.
type recorder struct {
	mu     sync.Mutex
	deny   string
	asked  []string
	reason string
}

func (r *recorder) policy(caller, action, resource string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, caller+" "+action+" "+resource)
	if action == r.deny {
		return r.reason
	}
	return ""
}

func TestPolicyDenial(t *testing.T) {
	const nodeRoleARN = "arn:aws:iam::123456789012:role/" + nodeRole
	tests := []struct {
		name      string
		deny      string
		call      func(c *sdk.Client) error
		wantAsked []string
		wantMsg   string
		unchanged func(t *testing.T, svc *iam.Service)
	}{
		{name: "PassRole denied: the role is not added", deny: "iam:PassRole",
			call: func(c *sdk.Client) error {
				_, err := c.AddRoleToInstanceProfile(context.Background(), &sdk.AddRoleToInstanceProfileInput{
					InstanceProfileName: aws.String("p"), RoleName: aws.String(nodeRole)})
				return err
			},
			wantAsked: []string{
				"AKIDLAB iam:AddRoleToInstanceProfile arn:aws:iam::123456789012:instance-profile/p",
				"AKIDLAB iam:PassRole " + nodeRoleARN,
			},
			wantMsg: "is not authorized to perform: iam:PassRole on resource: " + nodeRoleARN,
			unchanged: func(t *testing.T, svc *iam.Service) {
				if p, ok := svc.InstanceProfile("p"); !ok || p.Role != nil {
					t.Errorf("profile p = %+v, %v; want it present with no role", p, ok)
				}
			}},
		{name: "CreateInstanceProfile denied: nothing created", deny: "iam:CreateInstanceProfile",
			call: func(c *sdk.Client) error {
				_, err := c.CreateInstanceProfile(context.Background(), &sdk.CreateInstanceProfileInput{
					InstanceProfileName: aws.String("q"), Path: aws.String("/k/")})
				return err
			},
			wantAsked: []string{"AKIDLAB iam:CreateInstanceProfile arn:aws:iam::123456789012:instance-profile/k/q"},
			wantMsg:   "iam:CreateInstanceProfile",
			unchanged: func(t *testing.T, svc *iam.Service) {
				if _, ok := svc.InstanceProfile("q"); ok {
					t.Errorf("profile q exists after a denied create")
				}
			}},
		{name: "DeleteInstanceProfile denied: still there", deny: "iam:DeleteInstanceProfile",
			call: func(c *sdk.Client) error {
				_, err := c.DeleteInstanceProfile(context.Background(), &sdk.DeleteInstanceProfileInput{InstanceProfileName: aws.String("p")})
				return err
			},
			wantAsked: []string{"AKIDLAB iam:DeleteInstanceProfile arn:aws:iam::123456789012:instance-profile/p"},
			wantMsg:   "iam:DeleteInstanceProfile",
			unchanged: func(t *testing.T, svc *iam.Service) {
				if _, ok := svc.InstanceProfile("p"); !ok {
					t.Errorf("profile p gone after a denied delete")
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := account.NewMemoryHost()
			svc, c := start(t, host)
			createProfile(t, c, "p", "/")
			rec := &recorder{deny: tt.deny, reason: "lab policy denies " + tt.deny}
			host.Policy = rec.policy
			err := tt.call(c)
			if code, status := accounttest.APIError(t, err); code != "AccessDenied" || status != 403 {
				t.Fatalf("got %q (HTTP %d): %v; want AccessDenied (403)", code, status, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("message %q lacks %q", err.Error(), tt.wantMsg)
			}
			if d := cmp.Diff(tt.wantAsked, rec.asked); d != "" {
				t.Errorf("policy questions (-want +got):\n%s", d)
			}
			tt.unchanged(t, svc)
		})
	}
}

func TestPersistenceAcrossRestart(t *testing.T) {
	host := account.NewMemoryHost()
	first, c := start(t, host)
	ctx := context.Background()
	created := createProfile(t, c, "kept", clusterDir+"u/")
	if _, err := c.AddRoleToInstanceProfile(ctx, &sdk.AddRoleToInstanceProfileInput{
		InstanceProfileName: aws.String("kept"), RoleName: aws.String(nodeRole)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TagInstanceProfile(ctx, &sdk.TagInstanceProfileInput{InstanceProfileName: aws.String("kept"), Tags: tags("a", "1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateRole(ctx, &sdk.CreateRoleInput{RoleName: aws.String("extra"), Path: aws.String("/x/"),
		AssumeRolePolicyDocument: aws.String(iam.EC2TrustPolicy)}); err != nil {
		t.Fatal(err)
	}
	before := first.Roles()

	second, c2 := start(t, &account.MemoryHost{RegionName: "eu-west-2", Account: "123456789012", Records: host.Records})
	out, err := c2.GetInstanceProfile(ctx, &sdk.GetInstanceProfileInput{InstanceProfileName: aws.String("kept")})
	if err != nil {
		t.Fatalf("GetInstanceProfile after restart: %v", err)
	}
	p := out.InstanceProfile
	got := []string{aws.ToString(p.InstanceProfileId), aws.ToString(p.Arn), aws.ToString(p.Roles[0].RoleName)}
	want := []string{aws.ToString(created.InstanceProfileId), aws.ToString(created.Arn), nodeRole}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("profile after restart (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"a": "1"}, tagMap(p.Tags)); d != "" {
		t.Errorf("tags after restart (-want +got):\n%s", d)
	}
	if d := cmp.Diff(before, second.Roles()); d != "" {
		t.Errorf("roles after restart (-want +got), seeds must not be minted again:\n%s", d)
	}
}

func TestSeedsViewsAndReset(t *testing.T) {
	host := account.NewMemoryHost()
	svc, c := start(t, host)
	ctx := context.Background()

	out, err := c.GetRole(ctx, &sdk.GetRoleInput{RoleName: aws.String(nodeRole)})
	if err != nil {
		t.Fatalf("GetRole: %v", err)
	}
	r := out.Role
	if id := aws.ToString(r.RoleId); !strings.HasPrefix(id, "AROA") {
		t.Errorf("RoleId = %q, want AROA...", id)
	}
	doc, err := url.QueryUnescape(aws.ToString(r.AssumeRolePolicyDocument))
	if err != nil || doc != iam.EC2TrustPolicy {
		t.Errorf("AssumeRolePolicyDocument decodes to %q (%v), want the EC2 trust policy", doc, err)
	}
	if aws.ToInt32(r.MaxSessionDuration) != 3600 {
		t.Errorf("MaxSessionDuration = %v, want 3600", r.MaxSessionDuration)
	}

	p := createProfile(t, c, "ip", clusterDir+"u/")
	if _, err := c.AddRoleToInstanceProfile(ctx, &sdk.AddRoleToInstanceProfileInput{
		InstanceProfileName: p.InstanceProfileName, RoleName: aws.String(nodeRole)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateRole(ctx, &sdk.CreateRoleInput{RoleName: aws.String("extra"), AssumeRolePolicyDocument: aws.String(iam.EC2TrustPolicy)}); err != nil {
		t.Fatal(err)
	}

	lookups := []struct {
		name, key string
		wantOK    bool
	}{
		{name: "by name", key: "ip", wantOK: true},
		{name: "by name in another case", key: "IP", wantOK: true},
		{name: "by ARN", key: aws.ToString(p.Arn), wantOK: true},
		{name: "by ARN without its path", key: "arn:aws:iam::123456789012:instance-profile/ip"},
		{name: "unknown", key: "nope"},
	}
	for _, tt := range lookups {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := svc.InstanceProfile(tt.key)
			if ok != tt.wantOK {
				t.Fatalf("InstanceProfile(%q) ok = %v, want %v", tt.key, ok, tt.wantOK)
			}
			if ok && (v.Role == nil || v.Role.Name != nodeRole || v.ARN != aws.ToString(p.Arn)) {
				t.Errorf("InstanceProfile(%q) = %+v, want %s carrying %s", tt.key, v, aws.ToString(p.Arn), nodeRole)
			}
		})
	}

	roleNames := func() []string {
		var out []string
		for _, r := range svc.Roles() {
			out = append(out, r.Name)
		}
		return out
	}
	if d := cmp.Diff([]string{"extra", "KarpenterControllerRole-ziba-production", nodeRole}, roleNames()); d != "" {
		t.Errorf("roles (-want +got):\n%s", d)
	}
	if err := svc.Reset(); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	if d := cmp.Diff([]string{"KarpenterControllerRole-ziba-production", nodeRole}, roleNames()); d != "" {
		t.Errorf("roles after Reset (-want +got):\n%s", d)
	}
	if ps := svc.Profiles(); len(ps) != 0 {
		t.Errorf("profiles after Reset = %+v, want none", ps)
	}
	again, err := iam.New(host, iam.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Profiles()) != 0 || len(again.Roles()) != 2 {
		t.Errorf("after Reset and restart: %d profiles, %d roles; want 0 and 2", len(again.Profiles()), len(again.Roles()))
	}
}

func TestCustomSeeds(t *testing.T) {
	tests := []struct {
		name  string
		seeds []iam.SeedRole
		want  []string
	}{
		{name: "nil means the course's roles", want: []string{"KarpenterControllerRole-ziba-production", nodeRole}},
		{name: "empty means none", seeds: []iam.SeedRole{}},
		{name: "custom with a path", seeds: []iam.SeedRole{{Name: "Node", Path: "/lab/"}}, want: []string{"arn:aws:iam::123456789012:role/lab/Node"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, err := iam.New(account.NewMemoryHost(), iam.Options{SeedRoles: tt.seeds})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range svc.Roles() {
				if tt.seeds != nil {
					got = append(got, r.ARN)
				} else {
					got = append(got, r.Name)
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("roles (-want +got):\n%s", d)
			}
		})
	}
}

// TestMalformedBeforePolicy: input IAM rejects as malformed never reaches the policy.
func TestMalformedBeforePolicy(t *testing.T) {
	host := account.NewMemoryHost()
	_, c := start(t, host)
	rec := &recorder{deny: "iam:GetInstanceProfile", reason: "denied"}
	host.Policy = rec.policy
	_, err := c.GetInstanceProfile(context.Background(), &sdk.GetInstanceProfileInput{InstanceProfileName: aws.String("bad/name")})
	if code, _ := accounttest.APIError(t, err); code != "ValidationError" {
		t.Fatalf("got %q: %v; want ValidationError", code, err)
	}
	if len(rec.asked) != 0 {
		t.Errorf("policy asked %v for a malformed request", rec.asked)
	}
}

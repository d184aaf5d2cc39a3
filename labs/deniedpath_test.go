package labs

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/fakeec2/accesskeys"
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/trail"
	"github.com/karplab/karplab/labs/evidence"
)

func TestIntegrationDeniedPathSolutionPasses(t *testing.T) {
	solutionPasses(t, deniedLab, 2*time.Minute, time.Minute, "")
}

// The learner's loop: the over-broad exercise applied as README step 3 has it, refused by the
// controller's policy; then the other first moves a learner makes, and the course's manifest
// over them (step 4), twice, and what its hint says: check passes, without a reset.
func TestIntegrationDeniedPathExerciseFailsThenFixPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(deniedLab)
	out := testOut(t)
	if err := l.Run(t.Context(), e, out, StageOptions{Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := e.ApplyExercise(t.Context(), deniedLab, "nodepool.yaml", out); err != nil {
		t.Fatal(err)
	}
	// The untouched exercise applies; Karpenter tries and the controller's policy refuses it.
	err := waitFor(t.Context(), out, time.Minute, "Karpenter's denied CreateFleet", func(ctx context.Context) (bool, string, error) {
		denied, err := e.Admin.Audit(ctx, trail.AuditQuery{Action: "CreateFleet", Caller: accesskeys.Karpenter, ErrorCode: "UnauthorizedOperation"})
		return len(denied) > 0, "", err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The provider's DryRun validation caught it: the unbounded NodePool's instance types
	// reach outside the policy, so the EC2NodeClass is not valid and nothing launches.
	var cond map[string]any
	err = waitFor(t.Context(), out, time.Minute, "EC2NodeClass ValidationSucceeded=False", func(ctx context.Context) (bool, string, error) {
		nc, err := e.Dynamic.Resource(nodeClassGVR).Get(ctx, generalPool, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		conds, _, _ := unstructured.NestedSlice(nc.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "ValidationSucceeded" && m["status"] == "False" {
				cond = m
			}
		}
		return cond != nil, "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cond["reason"] != "CreateFleetAuthCheckFailed" || !strings.Contains(fmt.Sprint(cond["message"]), "ec2:CreateFleet") {
		t.Errorf("ValidationSucceeded=False with %v: %v, want CreateFleetAuthCheckFailed naming ec2:CreateFleet", cond["reason"], cond["message"])
	}
	r := checkUntil(t, e, l, true, 10*time.Second) // it must not come to pass
	if !strings.Contains(reportText(r), "ziba-memory-hog: NodePool ziba-general admits it; only the region's offerings stop it today") {
		t.Errorf("refused-by-nodepool should say the offerings alone stop the Pending hog:\n%s", reportText(r))
	}
	if r.Passed {
		t.Fatalf("the untouched exercise passes:\n%s", reportText(r))
	}
	if claims, err := e.Dynamic.Resource(nodeClaimsGVR).List(t.Context(), metav1.ListOptions{}); err != nil || len(claims.Items) != 0 {
		t.Errorf("NodeClaims %v (%v), want none while the EC2NodeClass is not valid", claims, err)
	}
	// Karpenter ignores a NodePool that is not Ready, so no forbidden pod is refused by its bounds.
	want := []string{"workload-running", "chain-complete", "denied-zone", "denied-gpu", "denied-over-limit", "refused-by-nodepool", "nodepool-bounded"}
	if diff := cmp.Diff(want, r.Failed()); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s\n%s", diff, reportText(r))
	}
	for _, c := range r.Checks {
		if c.ID == "chain-complete" && !strings.Contains(c.Hint, "not Ready") {
			t.Errorf("chain-complete's hint should say why the applied NodePool is ignored: %q", c.Hint)
		}
	}
	// Then the learner's other first moves, in sequence on the same lab, ending in the trap of
	// issue 44: everything done but spec.limits, so the memory hog gets a machine bought for
	// it; the README's fix, applied twice, then says to delete that NodeClaim and apply the
	// workload again (the bare pod goes with its node); doing exactly that passes, without a
	// reset.
	const np = deniedLab + "/nodepool.yaml"
	courseLimits := "  limits:\n    cpu: \"200\"\n    memory: 800Gi\n"
	tags := "  tags:\n    application: ziba\n    environment: production\n    owner: platform\n"
	const hog = "ziba-memory-hog: NodePool ziba-general admits it"
	makeMoves(t, e, l, []move{
		{name: "the cost tags on the wrong object (the NodePool's labels)", apply: applyingEdited(solutionsFS, np,
			[2]string{tags, ""}, [2]string{"        workload.ziba.dev/tier: general\n", "        workload.ziba.dev/tier: general\n        application: ziba\n        environment: production\n        owner: platform\n"}),
			check: "denied-zone", problem: "EC2NodeClass ziba-general ValidationSucceeded=False", passed: []string{"nodepool-bounded"}, within: time.Minute},
		{name: "limits far too narrow", apply: applyingEdited(solutionsFS, np, [2]string{courseLimits, "  limits:\n    cpu: \"1\"\n    memory: 4Gi\n"}),
			check: "workload-running", problem: "limits.cpu 1 cannot hold the 2 replicas", within: 2 * time.Minute},
		{name: "everything but spec.limits", apply: applyingEdited(solutionsFS, np, [2]string{courseLimits, ""}),
			check: "denied-over-limit", problem: "the pod runs on node", within: 4 * time.Minute},
		{name: "what refused-by-nodepool says of it", apply: func(*testing.T, *Env) {},
			check: "refused-by-nodepool", problem: hog + ", and it runs on node", not: hog + "; only the region's offerings", within: time.Minute},
		{name: "limits ten times the course's", apply: applyingEdited(solutionsFS, np, [2]string{courseLimits, "  limits:\n    cpu: \"2000\"\n    memory: 8000Gi\n"}),
			check: "nodepool-bounded", problem: "limits.memory 8000Gi is 10 times the course's 800Gi", within: time.Minute},
		{name: "what refused-by-nodepool says of that", apply: func(*testing.T, *Env) {},
			check: "refused-by-nodepool", problem: hog + ", and it runs on node", within: time.Minute},
	})
	deniedFixAsHinted(t, e, l)
}

// deniedFixAsHinted is the README's fix, applied twice over the trap: the NodePool now
// refuses the hog, but the machine bought for it still runs it, and the hint says what to
// do; doing exactly that, check passes.
func deniedFixAsHinted(t *testing.T, e *Env, l *Lab) {
	applyingSolution(deniedLab)(t, e)
	applyingSolution(deniedLab)(t, e)
	r := checkShows(t, e, l, "denied-over-limit", "it runs the pod: delete it, then apply the workload again", time.Minute, "refused-by-nodepool")
	claim := regexp.MustCompile(`kubectl delete nodeclaim (\S+)`).FindStringSubmatch(checkOf(r, "denied-over-limit").Hint)
	if claim == nil {
		t.Fatalf("the hint names no NodeClaim to delete:\n%s", reportText(r))
	}
	pod, err := e.Kube.CoreV1().Pods(zibaNamespace).Get(t.Context(), "ziba-memory-hog", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := e.Dynamic.Resource(nodeClaimsGVR).Get(t.Context(), claim[1], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node, _, _ := unstructured.NestedString(nc.Object, "status", "nodeName"); node != pod.Spec.NodeName || node == "" {
		t.Fatalf("the hint's NodeClaim %s has node %q; the hog runs on %q", claim[1], node, pod.Spec.NodeName)
	}
	keepSnapshot(t, e, "denied-trap")
	start := time.Now()
	doAsHinted(t, r, "denied-over-limit", learnerDir(t, deniedLab), "kubectl delete nodeclaim "+claim[1], "kubectl apply -f denied-path/workload.yaml")
	if r = checkUntil(t, e, l, true, 3*time.Minute); !r.Passed {
		t.Fatalf("%s after doing what the hint says, check fails:\n%s", time.Since(start).Round(time.Second), reportText(r))
	}
	keepSnapshot(t, e, "denied-loop")
	t.Logf("learner's loop: passed %s after doing what the hint says", time.Since(start).Round(time.Second))
}

// nodePoolRefuses is the static half of the denied path: a bounded NodePool must refuse each
// forbidden pod by its own requirements or limits.
func TestNodePoolRefuses(t *testing.T) {
	bounded := karpv1.NodePool{Spec: karpv1.NodePoolSpec{
		Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
			{Key: "karpenter.k8s.aws/instance-category", Operator: corev1.NodeSelectorOpIn, Values: []string{"c", "m", "r"}},
			{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"eu-west-2a", "eu-west-2b", "eu-west-2c"}},
		}}},
		Limits: karpv1.Limits{corev1.ResourceMemory: resource.MustParse("800Gi")},
	}}
	broad := karpv1.NodePool{Spec: karpv1.NodePoolSpec{
		Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
			{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"linux"}},
		}}},
	}}
	zonePod := podWith(corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelTopologyZone: "eu-west-2d"}}, "1Gi")
	gpuPod := podWith(corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "karpenter.k8s.aws/instance-category", Operator: corev1.NodeSelectorOpIn, Values: []string{"p"}}},
		}}},
	}}}, "16Gi")
	hog := podWith(corev1.PodSpec{}, "900Gi")
	plain := podWith(corev1.PodSpec{}, "6Gi")
	tests := []struct {
		name    string
		pool    karpv1.NodePool
		pod     *corev1.Pod
		refused bool
	}{
		{name: "bounded pool refuses zone d", pool: bounded, pod: zonePod, refused: true},
		{name: "bounded pool refuses category p", pool: bounded, pod: gpuPod, refused: true},
		{name: "bounded pool refuses 900Gi by its limit", pool: bounded, pod: hog, refused: true},
		{name: "bounded pool admits a render worker", pool: bounded, pod: plain},
		{name: "broad pool admits zone d", pool: broad, pod: zonePod},
		{name: "broad pool admits category p", pool: broad, pod: gpuPod},
		{name: "broad pool admits 900Gi", pool: broad, pod: hog},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why := nodePoolRefuses(tt.pool, tt.pod)
			if (why != "") != tt.refused {
				t.Errorf("nodePoolRefuses = %q, want refused %t", why, tt.refused)
			}
		})
	}
}

func podWith(spec corev1.PodSpec, memory string) *corev1.Pod {
	spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory)},
	}}}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ziba"}, Spec: spec}
}

// The policy checks must fail on evidence that shows no denial, a denial that created
// something, an instance launched by someone else, or no policy at all.
func TestDeniedPolicyChecks(t *testing.T) {
	encrypted := true
	good := evidence.InstanceRow{ID: "i-1", Type: "m6i.large", Zone: "eu-west-2a", State: "running", HTTPTokens: "required",
		LaunchedBy: accesskeys.Karpenter, Tags: map[string]string{"application": "ziba", "environment": "production", "owner": "platform"},
		Volumes: []evidence.VolumeRow{{ID: "vol-1", Encrypted: &encrypted}}}
	gpu := good
	gpu.ID, gpu.Type = "i-2", "p3.2xlarge"
	byLearner := good
	byLearner.ID, byLearner.LaunchedBy = "i-3", accesskeys.Learner
	denial := evidence.AuditCall{Action: "RunInstances", Caller: accesskeys.CIDeploy, ErrorCode: "UnauthorizedOperation", Reason: "statement denies ec2:RunInstances"}
	leaky := denial
	leaky.Created = []string{"i-9"}
	policy := DeniedPolicy()
	tests := []struct {
		name       string
		policy     *authz.Policy
		instances  []evidence.InstanceRow
		launches   []evidence.AuditCall
		wantDenied bool
		wantPolicy bool
	}{
		{name: "clean", policy: &policy, instances: []evidence.InstanceRow{good}, launches: []evidence.AuditCall{denial}, wantDenied: true, wantPolicy: true},
		{name: "no denial, no policy", instances: []evidence.InstanceRow{good}},
		{name: "denial created something", policy: &policy, launches: []evidence.AuditCall{denial, leaky}, wantPolicy: true},
		{name: "gpu instance outside the policy", policy: &policy, instances: []evidence.InstanceRow{good, gpu}, launches: []evidence.AuditCall{denial}, wantDenied: true},
		{name: "instance launched by the learner", policy: &policy, instances: []evidence.InstanceRow{byLearner}, launches: []evidence.AuditCall{denial}, wantDenied: true},
		{name: "empty policy", policy: &authz.Policy{}, launches: []evidence.AuditCall{denial}, wantDenied: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &evidence.Evidence{Instances: tt.instances, Launches: tt.launches}
			g := &Grading{Snapshot: &evidence.Snapshot{Policy: tt.policy}, Evidence: ev, hist: evidence.DecodeHistory(nil)}
			got := []bool{checkUnauthorisedDenied(ev).Passed, checkWithinPolicy(g).Passed}
			if diff := cmp.Diff([]bool{tt.wantDenied, tt.wantPolicy}, got); diff != "" {
				t.Errorf("[denied, within-policy] passed (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIntegrationNoPassRoleNoInstanceProfile: with iam:PassRole taken from the controller's
// policy, the real provider cannot hand the node role to an instance profile: no profile
// carries the role, the EC2NodeClass is not Ready, and nothing launches.
func TestIntegrationNoPassRoleNoInstanceProfile(t *testing.T) {
	e := freshLab(t)
	ctx, out := t.Context(), testOut(t)
	p, err := e.Admin.Policy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	removed := false
	for i, st := range p.Statements {
		var keep []string
		for _, a := range st.AllowActions {
			if a == "iam:PassRole" {
				removed = true
				continue
			}
			keep = append(keep, a)
		}
		p.Statements[i].AllowActions = keep
	}
	if !removed {
		t.Fatalf("the controller's policy does not allow iam:PassRole to begin with: %+v", p)
	}
	if err := e.Admin.SetPolicy(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := e.ApplyExercise(ctx, "happy-path", "workload.yaml", out); err != nil {
		t.Fatal(err)
	}
	if err := e.ApplySolution(ctx, "happy-path", out); err != nil {
		t.Fatal(err)
	}
	err = waitFor(ctx, out, time.Minute, "AddRoleToInstanceProfile denied", func(ctx context.Context) (bool, string, error) {
		denied, err := e.Admin.Audit(ctx, trail.AuditQuery{Service: "iam", Action: "AddRoleToInstanceProfile", Caller: accesskeys.Karpenter})
		for _, d := range denied {
			if d.ErrorCode == "AccessDenied" {
				return true, "", err
			}
		}
		return false, fmt.Sprintf("%d AddRoleToInstanceProfile calls", len(denied)), err
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	for _, prof := range e.instanceProfiles(t) {
		if prof.roles > 0 {
			t.Errorf("instance profile %s carries %d roles without iam:PassRole", prof.name, prof.roles)
		}
	}
	nc, err := e.Dynamic.Resource(nodeClassGVR).Get(ctx, generalPool, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(nc.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Ready" && m["status"] == "True" {
			t.Errorf("EC2NodeClass Ready=True without an instance profile: %v", conds)
		}
	}
	if fleets, err := e.Admin.Audit(ctx, trail.AuditQuery{Action: "CreateFleet", Caller: accesskeys.Karpenter}); err != nil || len(launched(fleets)) > 0 {
		t.Errorf("CreateFleet launched %v (%v) without an instance profile", launched(fleets), err)
	}
}

func launched(calls []trail.AuditEvent) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Created...)
	}
	return out
}

type profileRef struct {
	name  string
	roles int
}

// instanceProfiles lists the account's instance profiles, as aws iam list-instance-profiles.
func (e *Env) instanceProfiles(t *testing.T) []profileRef {
	t.Helper()
	cfg := e.EC2.Options()
	c := iam.New(iam.Options{Region: cfg.Region, Credentials: cfg.Credentials, BaseEndpoint: cfg.BaseEndpoint, HTTPClient: cfg.HTTPClient})
	res, err := c.ListInstanceProfiles(t.Context(), &iam.ListInstanceProfilesInput{})
	if err != nil {
		t.Fatal(err)
	}
	var out []profileRef
	for _, p := range res.InstanceProfiles {
		out = append(out, profileRef{name: aws.ToString(p.InstanceProfileName), roles: len(p.Roles)})
	}
	return out
}

package labs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/fakeec2/accesskeys"
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/trail"

	"github.com/karplab/karplab/labs/evidence"
)

// The denied path is the seed's second use case: policy rejects incompatible, over-budget or
// unauthorised supply. Three over-reaching pods must end Pending with an explainable
// mismatch and no machine, an unauthorised launch must be refused by the IAM-like policy and
// be visible in the audit trail, and the legitimate render workers must still run.
const (
	deniedLab = "denied-path"
	// deniedRenderReplicas legitimate render workers run beside the forbidden pods.
	deniedRenderReplicas = 2
	// ciForbiddenType is what the CI pipeline tries to launch for a training job.
	ciForbiddenType = "p3.2xlarge"
)

// forbiddenPod is one over-reaching pod of the workload and how to recognise capacity
// bought for it: a NodeClaim, a launch request or an instance.
type forbiddenPod struct {
	id, name, title string
	// claim reports a NodeClaim whose requirements or requests serve the forbidden constraint.
	claim func(nc karpv1.NodeClaim) bool
	// param reports a launch-request parameter asking for the forbidden capacity.
	param func(key, value string) bool
	// instance reports an instance that is the forbidden capacity.
	instance func(in evidence.InstanceRow) bool
}

var (
	gpuTypeRe       = regexp.MustCompile(`^(p|g|inf|trn|dl)[0-9][a-z0-9-]*\.`)
	forbiddenMemory = resource.MustParse("900Gi")
)

var forbiddenPods = []forbiddenPod{
	{
		id: "denied-zone", name: "ziba-render-eu-west-2d",
		title: "A pod requiring a zone the region does not offer (eu-west-2d) gets no NodeClaim and no instance",
		claim: func(nc karpv1.NodeClaim) bool { return requires(nc, corev1.LabelTopologyZone, "eu-west-2d") },
		param: func(k, v string) bool { return v == "eu-west-2d" },
		instance: func(in evidence.InstanceRow) bool {
			return in.Zone == "eu-west-2d"
		},
	},
	{
		id: "denied-gpu", name: "ziba-gpu-trainer",
		title: "A pod requiring GPU capacity (instance-category p) gets no NodeClaim and no instance",
		claim: func(nc karpv1.NodeClaim) bool { return requires(nc, awsv1.LabelInstanceCategory, "p") },
		param: func(k, v string) bool { return strings.HasSuffix(k, "InstanceType") && gpuTypeRe.MatchString(v+".") },
		instance: func(in evidence.InstanceRow) bool {
			return gpuTypeRe.MatchString(in.Type)
		},
	},
	{
		id: "denied-over-limit", name: "ziba-memory-hog",
		title: "A pod requesting more memory (900Gi) than the NodePool may ever hold gets no NodeClaim and no instance",
		claim: func(nc karpv1.NodeClaim) bool {
			q, ok := nc.Spec.Resources.Requests[corev1.ResourceMemory]
			return ok && q.Cmp(forbiddenMemory) >= 0
		},
		param: func(k, v string) bool { return false },
		instance: func(in evidence.InstanceRow) bool {
			_, mem := instanceCapacity(in.Type)
			return mem >= forbiddenMemory.Value()
		},
	},
}

// requires reports whether the NodeClaim's requirement on key admits value explicitly.
func requires(nc karpv1.NodeClaim, key, value string) bool {
	for _, r := range nc.Spec.Requirements {
		if r.Key == key && r.Operator == corev1.NodeSelectorOpIn {
			for _, v := range r.Values {
				if v == value {
					return true
				}
			}
		}
	}
	return false
}

// DeniedPolicy is the IAM-like policy the denied-path lab puts in force: the Karpenter
// controller may launch only c, m and r families in the region's three zones, with
// encrypted volumes, IMDSv2 and the cost tags; the CI pipeline may not launch at all.
func DeniedPolicy() authz.Policy {
	return authz.Policy{Statements: []authz.PolicyStatement{
		{
			Sid:                     "KarpenterControllerLaunchGuardrails",
			Callers:                 []string{accesskeys.Karpenter},
			AllowedInstanceTypes:    []string{"c*", "m*", "r*"},
			AllowedZones:            []string{"eu-west-2a", "eu-west-2b", "eu-west-2c"},
			RequiredTags:            evidence.CostTagKeys,
			RequireEncryptedVolumes: true,
			RequireIMDSv2:           true,
		},
		{
			Sid:         "CIPipelineMayNotLaunch",
			Callers:     []string{accesskeys.CIDeploy},
			DenyActions: []string{"RunInstances", "CreateFleet"},
		},
	}}
}

func init() {
	register(&Lab{
		Name:     deniedLab,
		Position: 2,
		Title:    "Forbidden demand creates no machine; the legitimate workload still runs",
		Summary: `Three over-reaching pods (a zone the region lacks, GPU capacity, 900Gi of memory) and a CI
pipeline's GPU launch must all be refused, while two render workers still get capacity.
Bound the NodePool and govern the EC2NodeClass so Karpenter's launches pass the controller's
least-privilege policy; check proves each forbidden pod's quoted mismatch, no NodeClaim,
no launch request and no instance, and the denied launch in the audit trail.`,
		Checklist: []string{
			"A forbidden constraint creates no unauthorised NodeClaim or EC2 instance.",
			"Karpenter controller permissions are least-privilege and CloudTrail-visible.",
			"NodePools are mutually understandable, bounded, and do not overlap accidentally.",
		},
		Stage: stageDenied,
		Grade: gradeDenied,
	})
}

func gradeDenied(g *Grading) []Check {
	ev := g.Evidence
	chain, _ := checkChains(g, ev.PodsOf(zibaNamespace, renderWorker))
	running := g.withRoomInLimits(checkRunning(ev, zibaNamespace, renderWorker, deniedRenderReplicas), generalPool, renderWorker, deniedRenderReplicas)
	checks := []Check{running, chain}
	for _, fp := range forbiddenPods {
		checks = append(checks, checkDeniedPod(g, fp))
	}
	return append(checks,
		checkRefusedByNodePool(g),
		g.withinCourseLimits(checkBounded(g, generalPool), generalPool),
		checkUnauthorisedDenied(ev),
		checkWithinPolicy(g),
	)
}

// podRow is the evidence's row of a recorded pod (empty when it has none).
func (g *Grading) podRow(v *evidence.Versions[corev1.Pod]) evidence.PodRow {
	for _, r := range g.Evidence.Pods {
		if r.UID == v.UID {
			return r
		}
	}
	return evidence.PodRow{}
}

// podByName returns the latest recorded state of the named pod in ns.
func (g *Grading) podByName(ns, name string) (*evidence.Versions[corev1.Pod], evidence.PodRow, bool) {
	var found *evidence.Versions[corev1.Pod]
	for _, v := range g.hist.Pods {
		p := v.Last()
		if p.Namespace == ns && p.Name == name && (found == nil || found.Last().CreationTimestamp.Time.Before(p.CreationTimestamp.Time)) {
			found = v
		}
	}
	if found == nil {
		return nil, evidence.PodRow{}, false
	}
	return found, g.podRow(found), true
}

// checkDeniedPod: the pod is Pending with Karpenter's quoted mismatch, and nothing was bought
// for it: no NodeClaim, no launch request, no instance.
func checkDeniedPod(g *Grading, fp forbiddenPod) Check {
	v, row, ok := g.podByName(zibaNamespace, fp.name)
	if !ok {
		return fail(fp.id, fp.title, fmt.Sprintf("pod %s/%s was never created", zibaNamespace, fp.name),
			"Stage the lab: karplab lab run "+deniedLab, fmt.Sprintf("no pod %s/%s was ever recorded: nothing to refuse", zibaNamespace, fp.name))
	}
	p := newPursuit(g, row)
	switch row.Phase {
	case "Pending":
	case "Deleted":
		// A bare pod deleted with its node does not come back by itself.
		p.problems = append(p.problems, fmt.Sprintf("the pod is gone: deleted at %s (it was on node %s), and a bare pod is not recreated", hmsPtr(row.DeletedAt), evidence.Dash(row.Node)))
		p.hint = "Create the pod again, so the bounded NodePool refuses it: kubectl apply -f " + deniedLab + "/workload.yaml"
		if pod := v.Last(); !g.poolsRefuse(&pod) {
			p.hint = "Bound the NodePool first (it admits this pod: kubectl describe nodepool " + generalPool + "), then create the pod again: kubectl apply -f " + deniedLab + "/workload.yaml"
		}
	case "Running":
		p.problems = append(p.problems, fmt.Sprintf("the pod runs on node %s (NodeClaim %s, %s): capacity was bought for it", evidence.Dash(row.Node), evidence.Dash(row.NodeClaim), g.instanceType(row.InstanceID)))
	default:
		p.problems = append(p.problems, fmt.Sprintf("the pod is %s (node %s), not Pending", row.Phase, evidence.Dash(row.Node)))
	}
	p.readLaunches(g, fp, p.readClaims(g, fp, row))
	// An instance of the forbidden kind counts while it exists, whenever it was launched.
	for _, in := range g.Evidence.Instances {
		if fp.instance(in) {
			p.note(in.State != "terminated" || p.current(in.LaunchTime), fmt.Sprintf("instance %s (%s in %s, %s) exists", in.ID, in.Type, in.Zone, in.State))
		}
	}
	mismatch := row.KarpenterMessage
	if why := g.nodePoolNotReady(generalPool); mismatch == "" && len(p.problems) == 0 && why != "" {
		return fail(fp.id, fp.title, "the pod waits unexplained: Karpenter ignores the NodePool, so no bound of it refused the pod",
			g.notReadyHint(v.Last()), why)
	}
	if mismatch == "" && len(p.problems) == 0 {
		hint := "Karpenter explains a pod only once a NodePool exists: apply nodepool.yaml, then kubectl describe pod -n ziba " + fp.name
		if len(g.liveNodePools()) > 0 {
			hint = "Karpenter explains a pod within a few seconds of its next scheduling round: check again, or kubectl describe pod -n ziba " + fp.name
		}
		return failWith(fp.id, fp.title, "the pod waits, but Karpenter has not explained why yet (no FailedScheduling event from karpenter)",
			hint, []string{"no mismatch quoted yet: Karpenter has sent no FailedScheduling event for " + fp.name}, []string{"scheduler: " + evidence.Dash(row.PendingReason)})
	}
	evidence := []string{fmt.Sprintf("pod %s (uid %s, requests %s)", row.Name, row.UID, evidence.Dash(row.Requests))}
	if mismatch != "" {
		evidence = append(evidence, "karpenter: "+mismatch)
	}
	if row.PendingReason != "" {
		evidence = append(evidence, "scheduler: "+row.PendingReason)
	}
	if len(p.earlier) > 0 {
		evidence = append(evidence, fmt.Sprintf("%d attempts under the NodePools' earlier spec (current since %s), by NodeClaims since deleted, are not graded", len(p.earlier), p.since.Local().Format("15:04:05")))
		evidence = append(evidence, first(p.earlier, 2)...)
	}
	if len(p.problems) == 0 {
		return pass(fp.id, fp.title, "Pending with an explained mismatch; no NodeClaim, no launch request and no instance for it under the current NodePool", evidence...)
	}
	hint := p.hint
	if hint == "" {
		hint = "Bound the NodePool so Karpenter cannot synthesise this capacity at all (kubectl describe nodepool ziba-general), and check aws ec2 describe-instances."
	}
	return failWith(fp.id, fp.title, fmt.Sprintf("capacity was pursued for a forbidden pod: %s", p.problems[0]), hint, first(p.problems, 5), evidence)
}

// poolsRefuse reports whether every live NodePool refuses pod by its own bounds.
func (g *Grading) poolsRefuse(pod *corev1.Pod) bool {
	for _, np := range g.liveNodePools() {
		if nodePoolRefuses(np, pod) == "" {
			return false
		}
	}
	return true
}

// instanceType names an instance by its type ("instance i-... r6i.32xlarge"), as far as EC2 knows it.
func (g *Grading) instanceType(id string) string {
	if in, ok := g.Evidence.Instance(id); ok {
		return fmt.Sprintf("instance %s %s", in.ID, in.Type)
	}
	return "instance " + evidence.Dash(id)
}

// pursuit sorts the capacity pursued for a forbidden pod into what is graded and what is
// history: what an earlier, broader NodePool spec pursued is history the learner has since
// fixed, so graded is what happened since the NodePools took their current spec.
type pursuit struct {
	since             time.Time
	spans             map[string]claimSpan // NodeClaim name -> when it was made, and if it is gone
	problems, earlier []string
	pod               evidence.PodRow // the forbidden pod, as it is now
	hint              string          // what to do, when the problems call for more than bounding the NodePool
}

type claimSpan struct {
	created time.Time
	gone    bool
}

func newPursuit(g *Grading, pod evidence.PodRow) *pursuit {
	p := &pursuit{since: g.boundsSince(), spans: map[string]claimSpan{}, pod: pod}
	for _, v := range g.hist.NodeClaims {
		p.spans[v.Last().Name] = claimSpan{v.States[0].CreationTimestamp.Time, v.Deleted != nil}
	}
	return p
}

func (p *pursuit) current(t time.Time) bool { return !t.Before(p.since.Truncate(time.Second)) }

func (p *pursuit) note(graded bool, line string) {
	if graded {
		p.problems = append(p.problems, line)
	} else {
		p.earlier = append(p.earlier, "not graded: "+line)
	}
}

// claimGraded says whether what NodeClaim name did at is graded. A NodeClaim made under an
// earlier spec is history once deleted; while it exists it is graded under the current spec
// too: it keeps trying to launch for the pod, or it runs the pod on what it bought.
func (p *pursuit) claimGraded(name string, at time.Time) (bool, string) {
	l, ok := p.spans[name]
	switch {
	case !ok:
		return p.current(at), ""
	case !p.current(l.created) && l.gone:
		return false, ""
	case !p.current(l.created) && name == p.pod.NodeClaim && p.pod.Phase == "Running":
		// Deleting it deletes the bare pod too: the hint says to create it again.
		p.hint = fmt.Sprintf("The machine bought before the NodePool was bounded still runs the pod, and Karpenter does not take it back: "+
			"kubectl delete nodeclaim %s (the bare pod goes with its node), then create the pod again, which the bounded NodePool now refuses: kubectl apply -f %s/workload.yaml", name, deniedLab)
		return true, " (made under an earlier NodePool spec, it runs the pod: delete it, then apply the workload again)"
	case !p.current(l.created):
		return true, " (made under an earlier NodePool spec, it still exists and retries: delete it)"
	}
	return true, ""
}

// readClaims notes the NodeClaims nominated for the pod, or shaped by its forbidden
// constraint, and returns their names.
func (p *pursuit) readClaims(g *Grading, fp forbiddenPod, row evidence.PodRow) map[string]bool {
	claims := map[string]bool{}
	for _, e := range g.hist.Events[row.UID] {
		if nc := evidence.NominatedNodeClaim(e.Message); e.Reason == "Nominated" && nc != "" && !claims[nc] {
			claims[nc] = true
			graded, why := p.claimGraded(nc, evidence.FirstEventTime(e))
			p.note(graded, "Karpenter nominated NodeClaim "+nc+" for it"+why)
		}
	}
	for _, v := range g.hist.NodeClaims {
		for _, nc := range v.States {
			if fp.claim(nc) && !claims[nc.Name] {
				claims[nc.Name] = true
				graded, why := p.claimGraded(nc.Name, nc.CreationTimestamp.Time)
				p.note(graded, "NodeClaim "+nc.Name+" was created for its constraint"+why)
				break
			}
		}
	}
	return claims
}

// readLaunches notes the launch requests tagged for one of claims, or Karpenter asking for
// the forbidden capacity. (Other principals' denied attempts are graded by the policy checks.)
func (p *pursuit) readLaunches(g *Grading, fp forbiddenPod, claims map[string]bool) {
	for _, e := range g.Snapshot.Audit {
		if e.Action != "CreateFleet" && e.Action != "RunInstances" || e.DryRun {
			continue
		}
		nc := evidence.RequestTag(e.Parameters, awsv1.NodeClaimTagKey)
		switch {
		case nc != "" && claims[nc]:
			graded, _ := p.claimGraded(nc, e.Time)
			p.note(graded, fmt.Sprintf("%s %s was sent for NodeClaim %s (%s)", e.Action, e.RequestID, nc, resultOf(e)))
		case e.Caller == accesskeys.Karpenter && paramsMatch(e.Parameters, fp.param):
			graded, _ := p.claimGraded(nc, e.Time)
			p.note(graded, fmt.Sprintf("Karpenter's %s %s asked for the forbidden capacity (%s)", e.Action, e.RequestID, resultOf(e)))
		}
	}
}

// resultOf summarises an audit event's outcome.
func resultOf(e trail.AuditEvent) string {
	if e.ErrorCode != "" {
		return e.ErrorCode
	}
	return "created " + strings.Join(e.Created, " ")
}

func paramsMatch(params map[string]string, match func(k, v string) bool) bool {
	for k, v := range params {
		if match(k, v) {
			return true
		}
	}
	return false
}

// checkRefusedByNodePool: every forbidden pod is refused by the NodePools' own bounds —
// requirements it cannot meet or limits it cannot fit in — not merely by what EC2 happens to
// offer today.
func checkRefusedByNodePool(g *Grading) Check {
	const id, title = "refused-by-nodepool", "Each forbidden pod is refused by the NodePool's own bounds, not by luck of the catalog"
	pools := g.liveNodePools()
	if len(pools) == 0 {
		return fail(id, title, "no NodePool is applied", "kubectl apply -f "+deniedLab+"/nodepool.yaml",
			"no NodePool is applied: no bound of one refuses the forbidden pods")
	}
	var admitted, refused []string
	for _, fp := range forbiddenPods {
		v, _, ok := g.podByName(zibaNamespace, fp.name)
		if !ok {
			admitted = append(admitted, fp.name+": never created (stage the lab)")
			continue
		}
		pod, row := v.Last(), g.podRow(v)
		for _, np := range pools {
			why := nodePoolRefuses(np, &pod)
			switch {
			case why != "":
				refused = append(refused, fmt.Sprintf("%s: NodePool %s refuses it: %s", fp.name, np.Name, why))
			case row.Phase == "Running":
				admitted = append(admitted, fmt.Sprintf("%s: NodePool %s admits it, and it runs on node %s (%s)", fp.name, np.Name, evidence.Dash(row.Node), g.instanceType(row.InstanceID)))
			default:
				admitted = append(admitted, fmt.Sprintf("%s: NodePool %s admits it; only the region's offerings stop it today", fp.name, np.Name))
			}
		}
	}
	if len(admitted) == 0 {
		return pass(id, title, fmt.Sprintf("%d forbidden pods refused by %d NodePool(s)", len(forbiddenPods), len(pools)), refused...)
	}
	return fail(id, title, fmt.Sprintf("%d forbidden pod/NodePool pairs are not refused by the NodePool", len(admitted)),
		"An unbounded NodePool turns a malformed pod into whatever EC2 sells: bound zones, instance categories and spec.limits.",
		first(admitted, 6)...)
}

// boundsSince is when the live NodePools took their current spec: the latest time one of
// them was seen at its current generation first (zero when there is none).
func (g *Grading) boundsSince() time.Time {
	var t time.Time
	for _, v := range g.hist.NodePools {
		if v.Deleted != nil {
			continue
		}
		gen := v.Last().Generation
		for i, np := range v.States {
			if np.Generation == gen {
				if v.Seen[i].After(t) {
					t = v.Seen[i]
				}
				break
			}
		}
	}
	return t
}

// checkUnauthorisedDenied: a launch outside the policy was refused with UnauthorizedOperation,
// the audit trail keeps it with its decoded reason, and it created nothing.
func checkUnauthorisedDenied(ev *evidence.Evidence) Check {
	const id, title = "unauthorised-launch-denied", "An unauthorised launch was denied, created nothing, and is in the audit trail with its decoded reason"
	var denied, bad []string
	for _, c := range ev.Launches {
		if c.ErrorCode != "UnauthorizedOperation" {
			continue
		}
		line := fmt.Sprintf("%s %s by %s at %s: %s", c.Action, c.RequestID, c.Caller, c.Time.Local().Format("15:04:05"), evidence.Dash(c.Reason))
		switch {
		case len(c.Created) > 0:
			bad = append(bad, line+" — yet it created "+strings.Join(c.Created, " "))
		case c.Reason == "":
			bad = append(bad, line+" — with no decoded reason")
		default:
			denied = append(denied, line)
		}
	}
	if len(denied) > 0 && len(bad) == 0 {
		return pass(id, title, fmt.Sprintf("%d denied launch calls, none created anything", len(denied)), first(denied, 4)...)
	}
	if len(bad) > 0 {
		return fail(id, title, fmt.Sprintf("%d denied launch calls are not clean", len(bad)),
			"A denied call must create nothing and say why: read the audit trail (karplab evidence).", first(bad, 4)...)
	}
	return fail(id, title, "no launch call was ever denied: nothing proves the policy refuses unauthorised supply",
		"Stage the lab (karplab lab run "+deniedLab+"): its CI pipeline tries to launch a GPU instance it may not.",
		"the audit trail holds no launch call refused with UnauthorizedOperation")
}

// checkWithinPolicy: the Karpenter controller's policy is least-privilege (it bounds types,
// zones, encryption, IMDSv2 and tags, and nobody else may launch), and every instance that
// exists was launched by Karpenter inside that policy.
func checkWithinPolicy(g *Grading) Check {
	const id, title = "instances-within-policy", "Karpenter's EC2 permissions are least-privilege and every instance lies inside them"
	pol := g.Snapshot.Policy
	if pol == nil || len(pol.Statements) == 0 {
		return fail(id, title, "no IAM-like policy is in force: Karpenter may launch anything",
			"Stage the lab (karplab lab run "+deniedLab+"): it puts the controller's policy in force.",
			"the account has no IAM-like policy: every caller may launch anything")
	}
	var st *authz.PolicyStatement
	for i := range pol.Statements {
		s := &pol.Statements[i]
		if s.AppliesTo(accesskeys.Karpenter) && len(s.AllowedInstanceFamilies)+len(s.AllowedInstanceTypes) > 0 {
			st = s
			break
		}
	}
	if st == nil {
		return fail(id, title, "no policy statement bounds what the Karpenter controller may launch",
			"The controller's policy must allow only the approved instance families and zones.",
			"no statement of the policy names the instance types or families "+accesskeys.Karpenter+" may launch")
	}
	var gaps []string
	if len(st.AllowedZones) == 0 {
		gaps = append(gaps, "statement "+st.Sid+" allows every zone")
	}
	if !st.RequireEncryptedVolumes {
		gaps = append(gaps, "statement "+st.Sid+" allows unencrypted volumes")
	}
	if !st.RequireIMDSv2 {
		gaps = append(gaps, "statement "+st.Sid+" allows IMDSv1")
	}
	if len(st.RequiredTags) == 0 {
		gaps = append(gaps, "statement "+st.Sid+" requires no cost tags")
	}
	for _, in := range g.Evidence.Instances {
		if in.LaunchedBy != accesskeys.Karpenter {
			gaps = append(gaps, fmt.Sprintf("instance %s was launched by %s, not by the Karpenter controller", in.ID, evidence.Dash(in.LaunchedBy)))
			continue
		}
		if why := outsidePolicy(*st, in); why != "" {
			gaps = append(gaps, fmt.Sprintf("instance %s (%s in %s): %s", in.ID, in.Type, in.Zone, why))
		}
	}
	allowed := append(append([]string{}, st.AllowedInstanceFamilies...), st.AllowedInstanceTypes...)
	summary := fmt.Sprintf("statement %s: types %s, zones %s, encrypted volumes %t, IMDSv2 %t, tags %s",
		st.Sid, strings.Join(allowed, " "), strings.Join(st.AllowedZones, " "), st.RequireEncryptedVolumes, st.RequireIMDSv2, strings.Join(st.RequiredTags, " "))
	if len(gaps) == 0 {
		return pass(id, title, fmt.Sprintf("%d instances, all launched by the controller inside its policy", len(g.Evidence.Instances)), summary)
	}
	return fail(id, title, fmt.Sprintf("%d findings against least privilege", len(gaps)),
		"Only the Karpenter controller should launch, and only what its policy allows: terminate what lies outside it and find who launched it in the audit trail.",
		append([]string{summary}, first(gaps, 6)...)...)
}

// outsidePolicy re-checks a launched instance against the statement, as the emulator would
// have at launch (types and zones, encrypted volumes, IMDSv2, tags).
func outsidePolicy(st authz.PolicyStatement, in evidence.InstanceRow) string {
	family, _, _ := strings.Cut(in.Type, ".")
	typeOK := false
	for _, f := range st.AllowedInstanceFamilies {
		typeOK = typeOK || f == family
	}
	for _, p := range st.AllowedInstanceTypes {
		ok, _ := path.Match(p, in.Type)
		typeOK = typeOK || ok
	}
	if len(st.AllowedInstanceFamilies)+len(st.AllowedInstanceTypes) > 0 && !typeOK {
		return "its type is not allowed"
	}
	if len(st.AllowedZones) > 0 && !hasString(st.AllowedZones, in.Zone) {
		return "its zone is not allowed"
	}
	if st.RequireIMDSv2 && in.HTTPTokens != "required" && in.State != "terminated" {
		return "it allows IMDSv1"
	}
	if st.RequireEncryptedVolumes {
		for _, v := range in.Volumes {
			if v.Encrypted != nil && !*v.Encrypted {
				return "volume " + v.ID + " is not encrypted"
			}
		}
	}
	for _, k := range st.RequiredTags {
		if _, ok := in.Tags[k]; !ok {
			return "it lacks tag " + k
		}
	}
	return ""
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func stageDenied(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error {
	fmt.Fprintf(out, " putting the Karpenter controller's least-privilege policy in force (and the CI pipeline's: no launches)\n")
	if err := e.Admin.SetPolicy(ctx, DeniedPolicy()); err != nil {
		return fmt.Errorf("setting the EC2 policy: %w", err)
	}
	if err := e.ApplyExercise(ctx, deniedLab, "workload.yaml", out); err != nil {
		return err
	}
	if err := ciLaunchAttempt(ctx, e, out); err != nil {
		return err
	}
	if !opts.Solution {
		if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, "app.kubernetes.io/part-of=ziba-publishing", deniedRenderReplicas+len(forbiddenPods), "Pending (Unschedulable)"); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nFive pods wait: two render workers, three over-reaching pods. Your task: karplab lab get %s, bound nodepool.yaml, apply it, then karplab check %s\n", deniedLab, deniedLab)
		return nil
	}
	if err := e.ApplySolution(ctx, deniedLab, out); err != nil {
		return err
	}
	if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, renderSelector, deniedRenderReplicas, "Running"); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThe render workers run; the three forbidden pods stay Pending. Grade it: karplab check %s; read it: karplab evidence\n", deniedLab)
	return nil
}

// ciLaunchAttempt is the CI pipeline trying to launch a GPU instance for a training job with
// its own credentials: the policy refuses it, and the audit trail keeps the decoded reason.
func ciLaunchAttempt(ctx context.Context, e *Env, out io.Writer) error {
	ci := cluster.NewEC2Client(e.EC2Endpoint, accesskeys.CIDeploy)
	images, err := ci.DescribeImages(ctx, &ec2.DescribeImagesInput{
		Filters: []ec2types.Filter{{Name: aws.String("architecture"), Values: []string{"x86_64"}}},
	})
	if err != nil {
		return fmt.Errorf("the CI pipeline describing images: %w", err)
	}
	if len(images.Images) == 0 {
		return errors.New("the CI pipeline found no x86_64 image to launch")
	}
	_, err = ci.RunInstances(ctx, &ec2.RunInstancesInput{
		ImageId: images.Images[0].ImageId, InstanceType: ec2types.InstanceType(ciForbiddenType),
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: []ec2types.Tag{
			{Key: aws.String("application"), Value: aws.String("ziba")},
			{Key: aws.String("owner"), Value: aws.String("ml-ci")},
		}}},
	})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "UnauthorizedOperation" {
		return fmt.Errorf("the CI pipeline's RunInstances %s was not denied as it must be (err: %v)", ciForbiddenType, err)
	}
	reason, err := e.Admin.DecodeAuthorizationMessage(ctx, encodedMessage(apiErr.ErrorMessage()))
	if err != nil {
		return fmt.Errorf("decoding the denial: %w", err)
	}
	fmt.Fprintf(out, " the CI pipeline (%s) tried RunInstances %s: UnauthorizedOperation\n   decoded: %s\n", accesskeys.CIDeploy, ciForbiddenType, reason)
	return nil
}

// encodedMessage extracts the opaque part of "You are not authorized ... Encoded
// authorization failure message: XYZ".
func encodedMessage(msg string) string {
	if _, after, ok := strings.Cut(msg, "message: "); ok {
		return strings.TrimSpace(after)
	}
	return msg
}

// nodePoolNotReady says why Karpenter ignores the named NodePool (poolNotReady), as the
// history last saw it and its EC2NodeClass. It is "" while the NodePool is Ready or its
// readiness is not known yet.
func (g *Grading) nodePoolNotReady(name string) string {
	for _, np := range g.liveNodePools() {
		if np.Name != name {
			continue
		}
		if ready := np.StatusConditions().Get("Ready"); ready == nil || ready.Status != metav1.ConditionFalse {
			return ""
		}
		return poolNotReady(np, g.liveNodeClass(poolClassName(np)))
	}
	return ""
}

// notReadyHint says what to fix when Karpenter ignores the lab's NodePool: the NodePool's
// bounds only where it still admits pod; otherwise the EC2NodeClass, whose DryRun launches
// the controller's policy refuses.
func (g *Grading) notReadyHint(pod corev1.Pod) string {
	const govern = "govern the EC2NodeClass as the policy requires (the cost tags application, environment and owner under spec.tags, encrypted volumes, httpTokens: required): " +
		"karplab ec2 audit --error UnauthorizedOperation and karplab ec2 decode name what it refused"
	for _, np := range g.liveNodePools() {
		if np.Name == generalPool && nodePoolRefuses(np, &pod) == "" {
			return "kubectl describe ec2nodeclass " + generalPool + ": the provider's DryRun launch was refused by the controller's policy. Bound the NodePool inside the policy (instance categories, zones) and " + govern + "."
		}
	}
	return "NodePool " + generalPool + " already refuses this pod; Karpenter ignores it only because the provider's DryRun launch was refused (kubectl describe ec2nodeclass " + generalPool + "): " + govern + "."
}

// liveNodeClass is the EC2NodeClass named, as the history last saw it (nil when gone).
func (g *Grading) liveNodeClass(name string) *unstructured.Unstructured {
	for _, v := range g.hist.NodeClasses {
		if obj := v.Last(); obj.GetName() == name && v.Deleted == nil {
			return obj
		}
	}
	return nil
}

package labs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/fakeec2/accesskeys"

	"github.com/karplab/karplab/labs/evidence"
)

// The ami-drift lab: the nodes run the EKS-optimized AL2023 AMI that al2023@latest resolved
// to; then AWS publishes a new release. With @latest the EC2NodeClass resolves the new AMI
// (within a day, as Karpenter caches SSM for 24 hours; at once when it restarts), every node
// has drifted, and Karpenter replaces them all: a rollout nobody planned. Pinned to
// an immutable release (al2023@vYYYYMMDD), nothing happens until the team moves the pin — and
// moving it back is the rollback.
const (
	amiDriftLab  = "ami-drift"
	amiReplicas  = 3
	amiNodeClass = "ziba-general"
)

var releaseRe = regexp.MustCompile(`^amazon-eks-node-al2023-[a-z0-9_]+-standard-[0-9.]+-v([0-9]{8})$`)

func init() {
	register(&Lab{
		Name:     amiDriftLab,
		Position: 6,
		Title:    "A new AMI is published: pin an approved release, roll forward on purpose, roll back",
		Summary: `The nodes run the AL2023 AMI that al2023@latest resolved to; then AWS publishes a new release.
Pin the EC2NodeClass to an immutable release, so that the publication changes nothing; then
rehearse the rollout and the rollback by moving the pin. check proves from both control planes
which AMI every instance runs, that no drift replacement followed the publication by itself,
and that the instances followed the pin forward and back.`,
		Checklist: []string{
			"EC2NodeClass resolves only approved subnets, security groups, IAM role, immutable AMI, encrypted storage, and tags.",
			"Node bootstrap, leaked-instance detection, interruption, consolidation, and rollback are rehearsed.",
		},
		Stage:   stageAMIDrift,
		TwoStep: true,
		Grade:   gradeAMIDrift,
	})
}

// amiPin is an EC2NodeClass's AMI selection: its terms, rendered, and what they pin.
type amiPin struct {
	Terms []string
	// Release is the pinned alias's release ("20261101"), or "".
	Release string
	// IDs are pinned image IDs.
	IDs []string
	// Mutable names the terms that select whatever matches today (@latest, names, tags).
	Mutable []string
}

func (p amiPin) pinned() bool { return len(p.Mutable) == 0 && (p.Release != "" || len(p.IDs) > 0) }

func (p amiPin) String() string { return strings.Join(p.Terms, ", ") }

func parsePin(terms []any) amiPin {
	var p amiPin
	for _, t := range terms {
		m, _ := t.(map[string]any)
		var parts []string
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v, _ := json.Marshal(m[k])
			parts = append(parts, k+"="+strings.Trim(string(v), `"`))
		}
		term := strings.Join(parts, " ")
		p.Terms = append(p.Terms, term)
		switch {
		case m["alias"] != nil:
			alias, _ := m["alias"].(string)
			_, version, _ := strings.Cut(alias, "@")
			if version == awsv1.AliasVersionLatest || !strings.HasPrefix(version, "v") {
				p.Mutable = append(p.Mutable, term)
			} else {
				p.Release = strings.TrimPrefix(version, "v")
			}
		case m["id"] != nil:
			id, _ := m["id"].(string)
			p.IDs = append(p.IDs, id)
		default:
			p.Mutable = append(p.Mutable, term)
		}
	}
	return p
}

// pinState is the EC2NodeClass's AMI selection from At on.
type pinState struct {
	At   time.Time
	Pin  amiPin
	AMIs []string // status.amis IDs
}

// pinHistory returns the EC2NodeClass's AMI selector and resolved AMIs each time either changed.
func (g *Grading) pinHistory(name string) []pinState {
	var out []pinState
	for _, v := range g.hist.NodeClasses {
		if v.Last().GetName() != name {
			continue
		}
		for i, obj := range v.States {
			terms, _, _ := unstructured.NestedSlice(obj.Object, "spec", "amiSelectorTerms")
			amis, _, _ := unstructured.NestedSlice(obj.Object, "status", "amis")
			st := pinState{At: v.Seen[i].UTC(), Pin: parsePin(terms)}
			for _, a := range amis {
				if m, ok := a.(map[string]any); ok {
					if id, ok := m["id"].(string); ok {
						st.AMIs = append(st.AMIs, id)
					}
				}
			}
			if n := len(out); n > 0 && out[n-1].Pin.String() == st.Pin.String() && strings.Join(out[n-1].AMIs, ",") == strings.Join(st.AMIs, ",") {
				continue
			}
			out = append(out, st)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// imageRelease maps image IDs to their release, from the images EC2 describes.
func (g *Grading) imageReleases() map[string]string {
	out := map[string]string{}
	for _, im := range g.Snapshot.Images {
		if m := releaseRe.FindStringSubmatch(aws.ToString(im.Name)); m != nil {
			out[aws.ToString(im.ImageId)] = m[1]
		}
	}
	return out
}

// publication is the AMI release AWS published during the lab.
type publication struct {
	Release string
	At      time.Time
	Images  []string
	// Resolved is when Karpenter next asked EC2 for images (the EC2NodeClass controller).
	Resolved *time.Time
}

func (g *Grading) publication() (publication, bool) {
	if len(g.Snapshot.History) == 0 {
		return publication{}, false
	}
	start := g.Snapshot.History[0].Time
	var p publication
	for _, im := range g.Snapshot.Images {
		created, err := time.Parse(time.RFC3339, aws.ToString(im.CreationDate))
		m := releaseRe.FindStringSubmatch(aws.ToString(im.Name))
		if err != nil || m == nil || !created.After(start) {
			continue
		}
		if created.After(p.At) {
			p.Release, p.At, p.Images = m[1], created.UTC(), nil
		}
		if m[1] == p.Release {
			p.Images = append(p.Images, aws.ToString(im.ImageId)+" "+aws.ToString(im.Name))
		}
	}
	if p.Release == "" {
		return p, false
	}
	sort.Strings(p.Images)
	for _, e := range g.Snapshot.Audit {
		if e.Action == "DescribeImages" && e.Caller == accesskeys.Karpenter && !e.Time.Before(p.At) && e.ErrorCode == "" {
			t := e.Time.UTC()
			p.Resolved = &t
			break
		}
	}
	return p, true
}

func gradeAMIDrift(g *Grading) []Check {
	history := g.pinHistory(amiNodeClass)
	pub, published := g.publication()
	releases := g.imageReleases()
	return []Check{
		checkRunning(g.Evidence, zibaNamespace, renderWorker, amiReplicas),
		checkAMIPinned(history),
		checkReleasePublished(pub, published),
		checkNoUnplannedRollout(g, history, pub, published, releases),
		checkApprovedAMI(g, history, releases),
		checkRollbackRehearsed(g, history, pub, published, releases),
		checkNoLeaks(g.Evidence),
	}
}

func checkAMIPinned(history []pinState) Check {
	const id, title = "ami-pinned", "The EC2NodeClass selects an immutable AMI: a pinned release (al2023@vYYYYMMDD) or an AMI ID"
	if len(history) == 0 {
		return fail(id, title, "no EC2NodeClass "+amiNodeClass+" was ever applied", "kubectl apply -f "+amiDriftLab+"/nodepool.yaml",
			"no EC2NodeClass "+amiNodeClass+" selects an AMI")
	}
	now := history[len(history)-1]
	if !now.Pin.pinned() {
		return fail(id, title, fmt.Sprintf("amiSelectorTerms %s select whatever AWS publishes next", now.Pin),
			"Pin the release the nodes run: alias: al2023@v20261101 (kubectl get ec2nodeclass ziba-general -o yaml shows status.amis); @latest, names and tags follow AWS's publications.",
			now.Pin.Mutable...)
	}
	return pass(id, title, "amiSelectorTerms "+now.Pin.String(), "resolved to "+strings.Join(now.AMIs, ", "))
}

func checkReleasePublished(pub publication, ok bool) Check {
	const id, title = "release-published", "AWS published a new AL2023 release during the lab, and Karpenter resolved the EC2NodeClass again after it"
	const hint = "Once the workers run, run karplab lab run ami-drift again: AWS publishes a new release."
	if !ok {
		return fail(id, title, "no AMI release was published since the lab started", hint, "no new AL2023 release yet: the publication is the lab's second run")
	}
	reason := fmt.Sprintf("release v%s published at %s", pub.Release, hms(pub.At))
	if pub.Resolved == nil {
		return failWith(id, title, reason+"; Karpenter has not looked at the images since", "Wait for the EC2NodeClass controller (it resolves at least every minute).",
			[]string{"no DescribeImages by Karpenter since v" + pub.Release + " was published"}, pub.Images)
	}
	return pass(id, title, reason+fmt.Sprintf("; Karpenter's DescribeImages at %s (+%s)", hms(*pub.Resolved), pub.Resolved.Sub(pub.At).Round(time.Millisecond)), pub.Images...)
}

// pinNow is the AMI selection in force now (empty without an EC2NodeClass).
func pinNow(history []pinState) amiPin {
	if len(history) == 0 {
		return amiPin{}
	}
	return history[len(history)-1].Pin
}

// pinAt is the AMI selection in force at t.
func pinAt(history []pinState, t time.Time) amiPin {
	var pin amiPin
	for _, h := range history {
		if h.At.After(t) {
			break
		}
		pin = h.Pin
	}
	return pin
}

// pinChangedBetween reports whether the AMI selector changed in (from, to].
func pinChangedBetween(history []pinState, from, to time.Time) bool {
	for i := 1; i < len(history); i++ {
		h := history[i]
		if h.At.After(from) && !h.At.After(to) && h.Pin.String() != history[i-1].Pin.String() {
			return true
		}
	}
	return false
}

func checkNoUnplannedRollout(g *Grading, history []pinState, pub publication, published bool, releases map[string]string) Check {
	const id, title = "no-unplanned-rollout", "The publication replaced no node by itself: every drift replacement followed a change of the pin"
	if !published {
		return fail(id, title, "no release was published yet, so nothing was tested", "Once the workers run, run karplab lab run ami-drift again.",
			"no publication has tested the pin yet")
	}
	var unplanned, planned []string
	for _, c := range g.claimLives(generalPool) {
		if c.Reason != "Drifted" || c.Disrupting == nil || c.Disrupting.Before(pub.At) {
			continue
		}
		line := fmt.Sprintf("%s (%s, AMI %s v%s) drifted (%s) at %s", c.Name, evidence.Dash(c.InstanceID), evidence.Dash(c.ImageID), evidence.Dash(releases[c.ImageID]), evidence.Dash(c.DriftReason), hms(*c.Disrupting))
		if pinChangedBetween(history, pub.At, *c.Disrupting) {
			planned = append(planned, line+": after the pin moved")
		} else {
			unplanned = append(unplanned, fmt.Sprintf("%s: the pin had not moved (%s)", line, pinAt(history, *c.Disrupting)))
		}
	}
	if len(unplanned) > 0 {
		hint := "With al2023@latest the EC2NodeClass resolves every new release, every node drifts, and Karpenter rolls them all: pin a release and move it when you choose."
		if now := history[len(history)-1].Pin; now.pinned() {
			// The lesson is the event: the rollout happened and cannot be taken back.
			hint = fmt.Sprintf("Your pin (%s) holds now, but the rollout of v%s happened before it: an unplanned rollout cannot be undone. "+
				"To rehearse the publication with your pin in place, start over: karplab reset, karplab lab run %s, apply your nodepool.yaml, wait for the workers, then karplab lab run %s again.",
				now, pub.Release, amiDriftLab, amiDriftLab)
		}
		return failWith(id, title, fmt.Sprintf("%s replaced because AWS published v%s", nouns(len(unplanned), "node"), pub.Release), hint, unplanned, planned)
	}
	return pass(id, title, fmt.Sprintf("no node drifted because of v%s (%s)", pub.Release, nouns(len(planned), "planned replacement")), planned...)
}

func checkApprovedAMI(g *Grading, history []pinState, releases map[string]string) Check {
	const id, title = "instances-on-approved-ami", "Every instance runs the pinned AMI (DescribeInstances ImageId)"
	instances := g.Evidence.InstancesOfPool(generalPool)
	var running []evidence.InstanceRow
	for _, in := range instances {
		if in.State == "running" || in.State == "pending" {
			running = append(running, in)
		}
	}
	if len(running) == 0 {
		return fail(id, title, "no instance of "+generalPool+" runs", "kubectl apply -f "+amiDriftLab+"/nodepool.yaml, then kubectl get nodeclaims -w until the workers' machines run.",
			"no running instance carries karpenter.sh/nodepool="+generalPool)
	}
	var lines []string
	for _, in := range running {
		lines = append(lines, fmt.Sprintf("%s runs %s (v%s)", in.ID, in.ImageID, evidence.Dash(releases[in.ImageID])))
	}
	if len(history) == 0 {
		return failWith(id, title, "no EC2NodeClass to compare with", "kubectl apply -f "+amiDriftLab+"/nodepool.yaml", []string{"no EC2NodeClass " + amiNodeClass + " names an approved AMI"}, lines)
	}
	pin := history[len(history)-1].Pin
	if !pin.pinned() {
		return failWith(id, title, fmt.Sprintf("%s pins nothing, so no AMI is approved", pin),
			"Pin a release (alias: al2023@vYYYYMMDD): then the approved AMI is the one that release names.", []string{pin.String() + " selects whatever AWS publishes next"}, lines)
	}
	var wrong []string
	for _, in := range running {
		ok := releases[in.ImageID] != "" && releases[in.ImageID] == pin.Release
		for _, want := range pin.IDs {
			ok = ok || in.ImageID == want
		}
		if !ok {
			wrong = append(wrong, fmt.Sprintf("%s runs %s (v%s), not the pinned %s", in.ID, in.ImageID, evidence.Dash(releases[in.ImageID]), pin))
		}
	}
	if len(wrong) > 0 {
		return fail(id, title, fmt.Sprintf("%d of %d instances run another AMI", len(wrong), len(running)),
			"Karpenter replaces drifted nodes one budget at a time: wait for the rollout (kubectl get nodeclaims -L karpenter.k8s.aws/ec2nodeclass) and check again.", wrong...)
	}
	return pass(id, title, fmt.Sprintf("%s of %s: the pinned %s", nouns(len(running), "instance"), generalPool, pin), lines...)
}

func checkRollbackRehearsed(g *Grading, history []pinState, pub publication, published bool, releases map[string]string) Check {
	const id, title = "rollback-rehearsed", "The rollout and the rollback were rehearsed: pinned forward to the new release, then back, and the instances followed"
	const hint = "After the publication, pin al2023@v<new release> (kubectl apply or kubectl edit ec2nodeclass ziba-general), wait until every node runs it, then pin the previous release again."
	if !published {
		return fail(id, title, "no release was published yet", "Once the workers run, run karplab lab run ami-drift again.",
			"no new release to roll forward to yet")
	}
	var forward, back *pinState
	for i := range history {
		h := &history[i]
		if h.At.Before(pub.At) {
			continue
		}
		switch {
		case h.Pin.Release == pub.Release && forward == nil:
			forward = h
		case forward != nil && h.Pin.pinned() && h.Pin.Release != "" && h.Pin.Release < pub.Release:
			back = h
		}
	}
	if forward == nil {
		return failWith(id, title, fmt.Sprintf("the EC2NodeClass was never pinned to v%s", pub.Release), hint,
			[]string{fmt.Sprintf("no rollout rehearsed: since v%s was published, amiSelectorTerms never named al2023@v%s (now %s)", pub.Release, pub.Release, evidence.Dash(pinNow(history).String()))}, nil)
	}
	ev := []string{fmt.Sprintf("%s pinned %s", hms(forward.At), forward.Pin)}
	var forwardLaunches []string
	for _, in := range g.Evidence.InstancesOfPool(generalPool) {
		if releases[in.ImageID] == pub.Release && !in.LaunchTime.Before(forward.At.Add(-clockSlack)) {
			forwardLaunches = append(forwardLaunches, fmt.Sprintf("%s launched %s on %s (v%s)", in.ID, hms(in.LaunchTime), in.ImageID, pub.Release))
		}
	}
	ev = append(ev, forwardLaunches...)
	if len(forwardLaunches) == 0 {
		return failWith(id, title, fmt.Sprintf("pinned to v%s, but no instance came up on it", pub.Release), "Wait for Karpenter's drift rollout (kubectl get nodeclaims -w).",
			[]string{fmt.Sprintf("no instance launched on v%s since the pin moved to it at %s", pub.Release, hms(forward.At))}, ev)
	}
	if back == nil {
		return failWith(id, title, fmt.Sprintf("rolled forward to v%s, never back", pub.Release), hint,
			[]string{fmt.Sprintf("no rollback rehearsed: the pin never moved from v%s back to an earlier release", pub.Release)}, ev)
	}
	ev = append(ev, fmt.Sprintf("%s pinned back %s", hms(back.At), back.Pin))
	var backLaunches []string
	for _, in := range g.Evidence.InstancesOfPool(generalPool) {
		if releases[in.ImageID] == back.Pin.Release && !in.LaunchTime.Before(back.At.Add(-clockSlack)) {
			backLaunches = append(backLaunches, fmt.Sprintf("%s launched %s on %s (v%s)", in.ID, hms(in.LaunchTime), in.ImageID, back.Pin.Release))
		}
	}
	ev = append(ev, backLaunches...)
	if len(backLaunches) == 0 {
		return failWith(id, title, fmt.Sprintf("pinned back to v%s, but no instance came up on it yet", back.Pin.Release), "Wait for Karpenter's drift rollout (kubectl get nodeclaims -w).",
			[]string{fmt.Sprintf("no instance launched on v%s since the pin moved back at %s", back.Pin.Release, hms(back.At))}, ev)
	}
	return pass(id, title, fmt.Sprintf("rolled forward to v%s at %s and back to v%s at %s", pub.Release, hms(forward.At), back.Pin.Release, hms(back.At)), ev...)
}

func stageAMIDrift(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error {
	if opts.Solution {
		if err := e.ApplyExercise(ctx, amiDriftLab, "workload.yaml", out); err != nil {
			return err
		}
		if err := e.ApplySolution(ctx, amiDriftLab, out); err != nil {
			return err
		}
		if err := e.waitRolledOut(ctx, out, opts.Wait, zibaNamespace, renderWorker); err != nil {
			return err
		}
		approved, err := e.pinnedRelease(ctx)
		if err != nil {
			return err
		}
		release, err := e.publishRelease(ctx, out)
		if err != nil {
			return err
		}
		if err := e.waitChecks(ctx, out, opts.Wait, amiDriftLab, "release-published"); err != nil {
			return err
		}
		fmt.Fprintf(out, " the pin holds: no node drifts (watching 15s)\n")
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(15 * time.Second):
		}
		for _, step := range []struct{ what, release string }{{"roll forward", release}, {"roll back", approved}} {
			fmt.Fprintf(out, " %s: pin al2023@v%s\n", step.what, step.release)
			if err := e.pinRelease(ctx, step.release); err != nil {
				return err
			}
			if err := e.waitAMIRollout(ctx, out, opts.Wait, step.release); err != nil {
				return err
			}
		}
		fmt.Fprintf(out, "\nRolled forward and back. Grade it: karplab check %s; read it: karplab evidence\n", amiDriftLab)
		return nil
	}
	ready, err := e.twoStepReady(ctx, out, opts, amiDriftLab, amiReplicas, fmt.Sprintf(`
Three render workers wait for machines. Your task (karplab lab get %s): complete nodepool.yaml,
apply it, wait until the workers run, then run
  karplab lab run %s
again: AWS will publish a new AL2023 release.
`, amiDriftLab, amiDriftLab), "apply your nodepool.yaml")
	if err != nil || !ready {
		return err
	}
	release, err := e.publishRelease(ctx, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, `
Watch whether your nodes follow AWS's publication (Karpenter restarted, so it asked SSM again; a minute is plenty):
  kubectl get ec2nodeclass %s -o jsonpath='{.status.amis}'
  kubectl get nodeclaims -w
  aws ec2 describe-instances --filters Name=tag:karpenter.sh/nodepool,Values=%s --query 'Reservations[].Instances[].[InstanceId,ImageId,State.Name]'
Then rehearse the rollout and the rollback: pin al2023@v%s, wait until every node runs it,
pin the previous release again; then karplab check %s
`, amiNodeClass, generalPool, release, amiDriftLab)
	return nil
}

// publishRelease has AWS publish a new AL2023 release, then restarts Karpenter; it returns
// the release ("20261202"). Karpenter keeps an SSM answer for 24 hours, so on AWS a NodePool
// on @latest follows a release within a day, at once when Karpenter restarts (an upgrade, a
// node replaced, a leader change). The restart stands in for that day.
func (e *Env) publishRelease(ctx context.Context, out io.Writer) (string, error) {
	images, err := e.Admin.PublishRelease(ctx, "")
	if err != nil {
		return "", fmt.Errorf("publishing an AMI release: %w", err)
	}
	release := ""
	for _, im := range images {
		if m := releaseRe.FindStringSubmatch(im.Name); m != nil {
			release = m[1]
		}
		fmt.Fprintf(out, " AWS published %s (%s)\n", im.ID, im.Name)
	}
	fmt.Fprintf(out, " restarting Karpenter: it caches SSM's answer for 24h, and a restart (an upgrade, a leader change) asks again\n")
	if err := cluster.RestartKarpenter(ctx, e.Home); err != nil {
		return "", fmt.Errorf("restarting Karpenter: %w", err)
	}
	return release, nil
}

// newestRelease is the newest AL2023 release EC2 describes ("20261202").
func (e *Env) newestRelease(ctx context.Context) (string, error) {
	images, err := e.EC2.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}, Filters: []ec2types.Filter{
		{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-*"}},
	}})
	if err != nil {
		return "", fmt.Errorf("describing images: %w", err)
	}
	newest := ""
	for _, im := range images.Images {
		if m := releaseRe.FindStringSubmatch(aws.ToString(im.Name)); m != nil && m[1] > newest {
			newest = m[1]
		}
	}
	if newest == "" {
		return "", fmt.Errorf("EC2 describes no AL2023 release")
	}
	return newest, nil
}

// pinnedRelease is the release the EC2NodeClass's alias pins now.
func (e *Env) pinnedRelease(ctx context.Context) (string, error) {
	nc, err := e.Dynamic.Resource(nodeClassGVR).Get(ctx, amiNodeClass, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading EC2NodeClass %s: %w", amiNodeClass, err)
	}
	terms, _, _ := unstructured.NestedSlice(nc.Object, "spec", "amiSelectorTerms")
	pin := parsePin(terms)
	if pin.Release == "" {
		return "", fmt.Errorf("EC2NodeClass %s pins no release (%s)", amiNodeClass, pin)
	}
	return pin.Release, nil
}

// pinRelease points the EC2NodeClass's alias at release, as `kubectl edit` would.
func (e *Env) pinRelease(ctx context.Context, release string) error {
	patch := fmt.Sprintf(`{"spec":{"amiSelectorTerms":[{"alias":"al2023@v%s"}]}}`, release)
	_, err := e.Dynamic.Resource(nodeClassGVR).Patch(ctx, amiNodeClass, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: fieldManager})
	if err != nil {
		return fmt.Errorf("pinning EC2NodeClass %s to v%s: %w", amiNodeClass, release, err)
	}
	return nil
}

// waitAMIRollout waits until every running instance of the pool runs an image of release
// and no NodeClaim is being deleted, and the workers run.
func (e *Env) waitAMIRollout(ctx context.Context, out io.Writer, timeout time.Duration, release string) error {
	return waitFor(ctx, out, timeout, "instances on v"+release, func(ctx context.Context) (bool, string, error) {
		res, err := e.EC2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
			{Name: aws.String("tag:karpenter.sh/nodepool"), Values: []string{generalPool}},
			{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}},
		}})
		if err != nil {
			return false, "", err
		}
		images, err := e.EC2.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}, Filters: []ec2types.Filter{
			{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-*-v" + release}},
		}})
		if err != nil {
			return false, "", err
		}
		want := map[string]bool{}
		for _, im := range images.Images {
			want[aws.ToString(im.ImageId)] = true
		}
		on, total := 0, 0
		for _, r := range res.Reservations {
			for _, in := range r.Instances {
				total++
				if want[aws.ToString(in.ImageId)] {
					on++
				}
			}
		}
		done, status, err := e.rolledOut(ctx, zibaNamespace, renderWorker)
		if err != nil {
			return false, "", err
		}
		return on == total && total > 0 && done, fmt.Sprintf("%d of %d instances on v%s; %s", on, total, release, status), nil
	})
}

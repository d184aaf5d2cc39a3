package evidence

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
	"github.com/karplab/karplab/fakeec2/billing"
)

// htmlCases are the evidence the page is checked on: real runs (the happy path; and html-mixed:
// the happy path scaled to 30 workers then down to 2 so Karpenter consolidated a NodeClaim,
// plus pods no NodePool allows, a learner's RunInstances that leaked an instance and one
// that EC2 refused), and built records for hundreds of pods and for nothing at all.
func htmlCases(t *testing.T) []struct {
	name string
	ev   *Evidence
} {
	return []struct {
		name string
		ev   *Evidence
	}{
		{"happy-solution", Correlate(loadSnapshot(t, "happy-solution"))},
		{"happy-exercise", Correlate(loadSnapshot(t, "happy-exercise"))},
		{"html-mixed", Correlate(loadSnapshot(t, "html-mixed"))},
		{"fleet", fleetEvidence(500)},
		{"empty", &Evidence{TakenAt: time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)}},
	}
}

func renderHTML(t *testing.T, ev *Evidence) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := ev.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The page of a real run is pinned byte for byte: it reads no clock, so the same evidence
// gives the same page.
func TestGoldenEvidenceHTML(t *testing.T) {
	for _, name := range []string{"happy-solution", "happy-exercise", "html-mixed"} {
		t.Run(name, func(t *testing.T) {
			ev := Correlate(loadSnapshot(t, name))
			got := renderHTML(t, ev)
			if again := renderHTML(t, Correlate(loadSnapshot(t, name))); !bytes.Equal(got, again) {
				t.Fatal("two renderings of the same evidence differ")
			}
			golden(t, name+".evidence.html", got)
		})
	}
}

// The page must stand alone offline: well-formed, no script, nothing loaded from elsewhere,
// every SVG described in text, every table headed.
func TestEvidenceHTMLSelfContained(t *testing.T) {
	for _, tc := range htmlCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			page := renderHTML(t, tc.ev)
			doc, err := html.Parse(bytes.NewReader(page))
			if err != nil {
				t.Fatalf("parsing the page: %v", err)
			}
			if problems := selfContainedProblems(doc); len(problems) > 0 {
				t.Errorf("page is not self-contained:\n%s", strings.Join(problems, "\n"))
			}
			if !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) {
				t.Error("page does not start with <!DOCTYPE html>")
			}
			text := textOf(doc)
			for _, want := range wantText(tc.ev) {
				if !strings.Contains(text, want) {
					t.Errorf("page text lacks %q", want)
				}
			}
		})
	}
}

// Every real snapshot in testdata (other labs' too, as they are recorded) renders into a
// self-contained page that names every identifier of its evidence.
func TestEvidenceHTMLEverySnapshot(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.snapshot.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no snapshots in testdata")
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".snapshot.json.gz")
		t.Run(name, func(t *testing.T) {
			ev := Correlate(loadSnapshot(t, name))
			doc, err := html.Parse(bytes.NewReader(renderHTML(t, ev)))
			if err != nil {
				t.Fatal(err)
			}
			if problems := selfContainedProblems(doc); len(problems) > 0 {
				t.Errorf("page is not self-contained:\n%s", strings.Join(problems, "\n"))
			}
			text := textOf(doc)
			for _, want := range wantText(ev) {
				if !strings.Contains(text, want) {
					t.Errorf("page text lacks %q", want)
				}
			}
		})
	}
}

// selfContainedProblems lists what would make the page fetch something or run code, and
// what leaves a graphic or table without its text.
func selfContainedProblems(doc *html.Node) []string {
	var problems []string
	ids := map[string]bool{}
	var refs []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Script, atom.Iframe, atom.Object, atom.Embed, atom.Img, atom.Link, atom.Base, atom.Audio, atom.Video, atom.Source:
				problems = append(problems, "element <"+n.Data+">")
			case atom.Style:
				if css := textOf(n); strings.Contains(css, "@import") || strings.Contains(css, "url(http") || strings.Contains(css, "url(//") {
					problems = append(problems, "style fetches: "+css[:min(len(css), 80)])
				}
			case atom.Svg:
				if role := attr(n, "role"); role == "img" && attr(n, "aria-label") == "" && attr(n, "aria-labelledby") == "" {
					problems = append(problems, "an <svg role=img> has no text alternative")
				}
			case atom.Table:
				if findAll(n, atom.Th) == nil {
					problems = append(problems, "a table without header cells")
				}
			}
			if n.Data == "image" || n.Data == "use" || n.Data == "foreignObject" {
				problems = append(problems, "SVG element <"+n.Data+">")
			}
			for _, a := range n.Attr {
				key := strings.ToLower(a.Key)
				switch {
				case key == "id":
					ids[a.Val] = true
				case strings.HasPrefix(key, "on"):
					problems = append(problems, fmt.Sprintf("<%s %s> event handler", n.Data, a.Key))
				case key == "src" || key == "srcset" || key == "action" || key == "formaction" || key == "poster" || key == "data":
					problems = append(problems, fmt.Sprintf("<%s %s=%q>", n.Data, a.Key, a.Val))
				case key == "href" || strings.HasSuffix(key, ":href") || a.Namespace == "xlink" && a.Key == "href":
					if !strings.HasPrefix(a.Val, "#") {
						problems = append(problems, fmt.Sprintf("<%s href=%q> leaves the page", n.Data, a.Val))
					} else {
						refs = append(refs, a.Val[1:])
					}
				case key == "style":
					problems = append(problems, fmt.Sprintf("<%s style=%q>: inline styles belong in the stylesheet", n.Data, a.Val))
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, r := range refs {
		if !ids[r] {
			problems = append(problems, "link to missing #"+r)
		}
	}
	return problems
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func findAll(n *html.Node, a atom.Atom) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == a {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// wantText is what a reader must find on the page for this evidence: every identifier of the
// chain, every quoted reason, leaks, failed launch calls and cost groups.
func wantText(ev *Evidence) []string {
	want := []string{"Taken " + ev.TakenAt.UTC().Format("2006-01-02 15:04:05") + " UTC",
		fmt.Sprintf("$%.6f", ev.Cost.TotalUSD), fmt.Sprintf("$%.4f", ev.Cost.HourlyNowUSD)}
	for _, p := range ev.Pods {
		want = append(want, p.Name, p.UID)
		if p.NodeClaim != "" {
			want = append(want, p.NodeClaim, p.InstanceID, p.Node)
		}
		if isWaiting(&p) && p.KarpenterMessage != "" {
			want = append(want, p.KarpenterMessage)
		}
	}
	for _, in := range ev.Instances {
		want = append(want, in.ID)
		for _, v := range in.Volumes {
			want = append(want, v.ID)
		}
		for _, n := range in.ENIs {
			want = append(want, n.ID)
		}
	}
	for _, l := range ev.Leaks {
		want = append(want, l.InstanceID)
	}
	for _, c := range ev.Launches {
		if c.ErrorCode != "" {
			want = append(want, c.ErrorCode, c.Reason)
		}
	}
	for _, key := range CostTagKeys {
		for _, g := range ev.Cost.ByTag[key] {
			want = append(want, OrUntagged(g.Value))
		}
	}
	return want
}

// A value the control planes recorded is text, never markup: an event message with tags in it
// (Kubernetes quotes user input in messages) must come out escaped.
func TestEvidenceHTMLEscapes(t *testing.T) {
	ev := fleetEvidence(3)
	evil := `<script>alert("x")</script><img src=http://example.com/x>`
	ev.Pods[0].KarpenterMessage = evil
	ev.Pods[0].PendingReason = evil
	ev.Pods[0].Node, ev.Pods[0].NodeClaim, ev.Pods[0].ScheduledAt = "", "", nil
	ev.Launches[0].Reason = evil
	ev.Cost.ByTag["owner"] = append(ev.Cost.ByTag["owner"], billing.CostGroup{Value: evil, USD: 0.01})
	page := renderHTML(t, ev)
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	if problems := selfContainedProblems(doc); len(problems) > 0 {
		t.Errorf("hostile text became markup:\n%s", strings.Join(problems, "\n"))
	}
	if !strings.Contains(textOf(doc), evil) {
		t.Error("the hostile message is not shown as text")
	}
}

func TestTimelineAxis(t *testing.T) {
	origin := time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return origin.Add(time.Duration(s * float64(time.Second))) }
	tests := []struct {
		name       string
		times      []float64
		wantBreaks []string
		// wantOrder: these offsets map to strictly increasing x
		wantOrder []float64
	}{
		{name: "one instant", times: []float64{0}, wantOrder: []float64{0}},
		{name: "short chain is linear", times: []float64{0, 1, 4, 5, 12}, wantOrder: []float64{0, 1, 4, 5, 12}},
		{name: "provisioning then minutes of running", times: []float64{0, 1, 4, 5, 269}, wantBreaks: []string{"4m24s"}, wantOrder: []float64{0, 1, 4, 5, 100, 269}},
		{name: "scale down later", times: []float64{0, 2, 6, 70, 75, 400, 420, 480}, wantBreaks: []string{"1m4s", "5m25s", "1m"}, wantOrder: []float64{0, 6, 70, 75, 400, 420, 480}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ts []time.Time
			for _, s := range tt.times {
				ts = append(ts, at(s))
			}
			ax := newAxis(origin, ts, 100, 1000)
			var breaks []string
			for _, b := range ax.breaks {
				breaks = append(breaks, b.Label)
			}
			if diff := cmp.Diff(tt.wantBreaks, breaks); diff != "" {
				t.Errorf("breaks (-want +got):\n%s", diff)
			}
			prev := -1.0
			for _, s := range tt.wantOrder {
				x := ax.x(at(s))
				if x < 100 || x > 1000 {
					t.Errorf("x(+%vs) = %v, outside the chart", s, x)
				}
				if x <= prev {
					t.Errorf("x(+%vs) = %v, not right of the previous %v", s, x, prev)
				}
				prev = x
			}
			if first, last := ax.x(at(tt.times[0])), ax.x(at(tt.times[len(tt.times)-1])); len(tt.times) > 1 && (first != 100 || last != 1000) {
				t.Errorf("axis spans %v..%v, want 100..1000", first, last)
			}
			for i, tk := range ax.ticks() {
				if i > 0 && tk.X-ax.ticks()[i-1].X < 56 {
					t.Errorf("tick %q crowds the one before", tk.Label)
				}
			}
		})
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 400 * time.Millisecond: "0s", 5 * time.Second: "5s", 269 * time.Second: "4m29s",
		2 * time.Minute: "2m", time.Hour + 5*time.Minute: "1h5m", 26 * time.Hour: "26h",
	} {
		if got := duration(d); got != want {
			t.Errorf("duration(%v) = %q, want %q", d, got, want)
		}
	}
}

// The many-pods page stays bounded: aggregate lanes, a capped number of groups, a note for
// the rest, and every pod still in the correlation table.
func TestEvidenceHTMLManyPods(t *testing.T) {
	ev := fleetEvidence(500)
	p := newPage(ev)
	lanes := 0
	for _, g := range p.Timeline.Groups {
		lanes += len(g.Lanes)
	}
	leakDrawn := false
	for _, g := range p.Timeline.Groups {
		for _, l := range g.Lanes {
			leakDrawn = leakDrawn || strings.Contains(l.Title, "leaked")
		}
	}
	if !leakDrawn {
		t.Error("the leaked instance is not drawn; notable machines must survive the cap")
	}
	if lanes > tlMaxRows+5 {
		t.Errorf("%d lanes for 500 pods; want them aggregated", lanes)
	}
	if !strings.Contains(p.Timeline.Note, "11 more machines with 108 pods") {
		t.Errorf("note = %q, want it to count the groups not drawn", p.Timeline.Note)
	}
	if p.Timeline.Height > 6000 {
		t.Errorf("timeline is %v units high", p.Timeline.Height)
	}
	if len(p.Pods) != 500 {
		t.Errorf("correlation table has %d rows, want 500", len(p.Pods))
	}
	small := newPage(fleetEvidence(10))
	podLanes := 0
	for _, g := range small.Timeline.Groups {
		for _, l := range g.Lanes {
			if l.Class == "pod" {
				podLanes++
			}
		}
	}
	if podLanes != 10 {
		t.Errorf("10 pods drew %d pod lanes, want one each", podLanes)
	}
}

// fleetEvidence builds a record of n pods on NodeClaims of 10 pods each, with what the real
// happy-path snapshots lack: a consolidated NodeClaim (deletion, termination), pods denied with
// Karpenter's reason, a leaked instance, a denied launch call and untagged spend.
func fleetEvidence(n int) *Evidence {
	t0 := time.Date(2026, 12, 2, 13, 48, 25, 0, time.UTC)
	at := func(s int) *time.Time { t := t0.Add(time.Duration(s) * time.Second); return &t }
	ev := &Evidence{TakenAt: *at(1260)}
	claims := (n + 9) / 10
	denied := 2
	if n < 10 {
		denied = 1
	}
	for c := 0; c < claims; c++ {
		name := fmt.Sprintf("ziba-general-%05d", c)
		iid := fmt.Sprintf("i-%017x", 0xabc000+c)
		node := fmt.Sprintf("ip-10-0-%d-%d.eu-west-2.compute.internal", 64+c/200, 4+c%200)
		created := 1 + c/8
		nc := NodeClaimRow{Name: name, UID: fmt.Sprintf("uid-nc-%d", c), NodePool: "ziba-general", Created: *at(created),
			Launched: at(created), Registered: at(created + 3), Initialized: at(created + 4),
			ProviderID: "aws:///eu-west-2a/" + iid, InstanceID: iid, NodeName: node,
			InstanceType: "m6g.2xlarge", Zone: "eu-west-2a", CapacityType: "on-demand"}
		in := InstanceRow{ID: iid, Type: "m6g.2xlarge", Zone: "eu-west-2a", CapacityType: "on-demand", State: "running",
			LaunchTime: *at(created + 1), LaunchedBy: "AKIAKARPENTERCONTROL", NodeClaim: name, NodePool: "ziba-general", HTTPTokens: "required",
			Tags: map[string]string{"application": "ziba", "environment": "production", "owner": "platform", "karpenter.sh/nodeclaim": name},
			Volumes: []VolumeRow{{ID: fmt.Sprintf("vol-%017x", c), SizeGiB: 80, Type: "gp3", Encrypted: boolPtr(true), DeleteOnTermination: boolPtr(true),
				Tags: map[string]string{"application": "ziba", "environment": "production", "owner": "platform"}}},
			ENIs:         []ENIRow{{ID: fmt.Sprintf("eni-%017x", c), PrivateIP: fmt.Sprintf("10.0.%d.%d", 64+c/200, 4+c%200), Tags: map[string]string{"application": "ziba", "environment": "production", "owner": "platform"}}},
			PricePerHour: 0.3072, CostUSD: 0.1}
		if c == 0 {
			// Consolidated after the demand dropped.
			nc.DisruptionReason, nc.DeletionRequested, nc.Deleted = "Underutilized", at(905), at(930)
			in.State, in.TerminatedAt, in.TerminatedBy = "terminated", at(931), "AKIAKARPENTERCONTROL"
			in.Volumes[0].Deleted, in.ENIs[0].Deleted = true, true
		}
		ev.NodeClaims = append(ev.NodeClaims, nc)
		ev.Instances = append(ev.Instances, in)
		ev.Nodes = append(ev.Nodes, NodeRow{Name: node, UID: fmt.Sprintf("uid-node-%d", c), ProviderID: nc.ProviderID, InstanceID: iid,
			NodePool: "ziba-general", Registered: *at(created + 3), Ready: at(created + 4), Deleted: nc.Deleted})
		ev.Launches = append(ev.Launches, AuditCall{Time: *at(created + 1), Action: "CreateFleet", Caller: "AKIAKARPENTERCONTROL",
			RequestID: fmt.Sprintf("req-%d", c), NodeClaim: name, NodePool: "ziba-general", Created: []string{iid}})
	}
	for i := 0; i < n; i++ {
		c := i / 10
		p := PodRow{Namespace: "ziba", Name: fmt.Sprintf("ziba-render-worker-6c6b9cc854-%05d", i), UID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			Owner: "ReplicaSet/ziba-render-worker-6c6b9cc854", Requests: "cpu=1, memory=6Gi", Created: *at(c / 8), PendingSince: at(c / 8),
			PendingReason: "0/3 nodes are available: 3 Insufficient memory.", Phase: "Running"}
		if i >= n-denied {
			p.Name = fmt.Sprintf("ziba-gpu-trainer-%d", i)
			p.Requests = "cpu=4, memory=16Gi"
			p.Phase = "Pending"
			p.KarpenterMessage = `Failed to schedule pod, incompatible with nodepool "ziba-general", no instance type satisfied resources {"cpu":"4","memory":"16Gi","pods":"1"} and requirements karpenter.k8s.aws/instance-category In [p]`
			ev.Pods = append(ev.Pods, p)
			continue
		}
		nc := ev.NodeClaims[c]
		p.NominatedNodeClaim, p.NominatedAt = nc.Name, at(c/8+1)
		p.NodeClaim, p.InstanceID, p.Node = nc.Name, nc.InstanceID, nc.NodeName
		p.ScheduledAt, p.StartedAt = at(c/8+5), at(c/8+5+i%3)
		if c == 0 && i%10 >= 2 {
			p.DeletedAt, p.Phase = at(600), "Deleted"
		}
		ev.Pods = append(ev.Pods, p)
	}
	leak := InstanceRow{ID: "i-771b0b74fff710aa3", Type: "m6i.large", Zone: "eu-west-2a", CapacityType: "on-demand", State: "running",
		LaunchTime: *at(120), LaunchedBy: "AKIAKARPLABLEARNER01", NodeClaim: "ziba-general-zz9qx", HTTPTokens: "optional",
		Tags:    map[string]string{"kubernetes.io/cluster/karplab": "owned", "karpenter.sh/nodeclaim": "ziba-general-zz9qx"},
		Volumes: []VolumeRow{{ID: "vol-0leak", SizeGiB: 8, Type: "gp2", Encrypted: boolPtr(false), DeleteOnTermination: boolPtr(false)}},
		ENIs:    []ENIRow{{ID: "eni-0leak", PrivateIP: "10.0.64.250"}}, PricePerHour: 0.111, CostUSD: 0.0352}
	ev.Instances = append(ev.Instances, leak)
	ev.Leaks = []Leak{{InstanceID: leak.ID, NodeClaim: leak.NodeClaim, Since: leak.LaunchTime, CostUSD: leak.CostUSD}}
	ev.Launches = append(ev.Launches,
		AuditCall{Time: *at(120), Action: "RunInstances", Caller: "AKIAKARPLABLEARNER01", RequestID: "req-learner-1", Created: []string{leak.ID, "eni-0leak", "vol-0leak"}},
		AuditCall{Time: *at(150), Action: "RunInstances", Caller: "AKIAKARPLABLEARNER01", RequestID: "req-learner-2", ErrorCode: "UnauthorizedOperation",
			Reason: "User: arn:aws:iam::000000000000:user/learner is not authorized to perform: ec2:RunInstances with an explicit deny in an identity-based policy (instance type p4d.24xlarge)"})
	total := 0.0
	for _, in := range ev.Instances {
		total += in.CostUSD
	}
	ev.Cost = Cost{TotalUSD: total, HourlyNowUSD: 0.3072*float64(claims-1) + 0.111, ByTag: map[string][]billing.CostGroup{}}
	for _, key := range CostTagKeys {
		ev.Cost.ByTag[key] = []billing.CostGroup{{Value: "", USD: 0.0352, Resources: []string{leak.ID, "vol-0leak"}}}
	}
	ev.Cost.ByTag["application"] = append(ev.Cost.ByTag["application"], billing.CostGroup{Value: "ziba", USD: total - 0.0352, Resources: []string{"i-…"}})
	ev.Cost.ByTag["environment"] = append(ev.Cost.ByTag["environment"], billing.CostGroup{Value: "production", USD: total - 0.0352, Resources: []string{"i-…"}})
	ev.Cost.ByTag["owner"] = append(ev.Cost.ByTag["owner"],
		billing.CostGroup{Value: "data-team", USD: 0.02, Resources: []string{"i-…"}},
		billing.CostGroup{Value: "platform", USD: total - 0.0552, Resources: []string{"i-…"}})
	return ev
}

func boolPtr(b bool) *bool { return &b }

// TestIntegrationEvidencePageChromium renders pages in headless Chromium (Debian's chromium
// package): the screenshot must exist and show a real page, and the DOM Chromium builds must
// carry the evidence's identifiers. KARPLAB_SCREENSHOTS=DIR keeps the pages and PNGs for a person
// to look at.
func TestIntegrationEvidencePageChromium(t *testing.T) {
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		karplabtest.RequireClient(t, "chromium (apt-get install -y chromium): the evidence page is not rendered in a browser")
	}
	keep := os.Getenv("KARPLAB_SCREENSHOTS")
	for _, tc := range []struct {
		name  string
		ev    *Evidence
		width int
	}{
		{"happy-solution", Correlate(loadSnapshot(t, "happy-solution")), 1400},
		{"html-mixed", Correlate(loadSnapshot(t, "html-mixed")), 1400},
		{"fleet", fleetEvidence(500), 1400},
		{"fleet-narrow", fleetEvidence(12), 420},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if keep != "" {
				dir = keep
			}
			pagePath := filepath.Join(dir, tc.name+".html")
			if err := os.WriteFile(pagePath, renderHTML(t, tc.ev), 0o644); err != nil {
				t.Fatal(err)
			}
			shot := filepath.Join(dir, tc.name+".png")
			runChromium(t, bin, "--screenshot="+shot, fmt.Sprintf("--window-size=%d,2000", tc.width), "file://"+pagePath)
			checkScreenshot(t, shot)

			dom := runChromium(t, bin, "--dump-dom", "file://"+pagePath)
			doc, err := html.Parse(bytes.NewReader(dom))
			if err != nil {
				t.Fatalf("parsing Chromium's DOM: %v", err)
			}
			text := textOf(doc)
			for _, want := range wantText(tc.ev) {
				if !strings.Contains(text, want) {
					t.Errorf("Chromium's DOM lacks %q", want)
				}
			}
		})
	}
}

// runChromium runs one headless Chromium with its own profile and no network habits, and
// returns its stdout; it and its helpers are killed if it outlives the test's patience.
func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	profile := t.TempDir()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + profile}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	// Chromium forks helpers (zygote, GPU, network): on timeout kill its whole process group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	t.Logf("chromium %s: %v", args[0], time.Since(start).Round(time.Millisecond))
	return stdout.Bytes()
}

// checkScreenshot decodes the PNG and asks for a real page: big enough, and many colours
// spread over it (a blank or error page has a handful).
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	info, _ := f.Stat()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decoding the screenshot: %v", err)
	}
	colours, inked := pixelVariety(img)
	t.Logf("%s: %d bytes, %v, %d colours, %.0f%% of rows inked", filepath.Base(path), info.Size(), img.Bounds().Size(), colours, inked*100)
	if info.Size() < 20_000 {
		t.Errorf("screenshot is only %d bytes", info.Size())
	}
	if colours < 64 {
		t.Errorf("screenshot has %d colours; want a rendered page", colours)
	}
	if inked < 0.5 {
		t.Errorf("only %.0f%% of the screenshot's rows have content", inked*100)
	}
}

// pixelVariety counts distinct colours (sampled), and the share of rows that are not one flat colour.
func pixelVariety(img image.Image) (colours int, inkedRows float64) {
	b := img.Bounds()
	seen := map[uint32]bool{}
	inked := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		var first uint32
		flat := true
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := r>>8<<16 | g>>8<<8 | bl>>8
			if x == b.Min.X {
				first = c
			} else if c != first {
				flat = false
			}
			if x%3 == 0 {
				seen[c] = true
			}
		}
		if !flat {
			inked++
		}
	}
	return len(seen), float64(inked) / float64(b.Dy())
}

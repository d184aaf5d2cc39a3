package karplab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The house's direction, in one place: this file. Imports point one way,
// cmd -> labs -> cluster -> fakeec2, and each package's doc.go says what it must not import;
// the tables below are those rules, and TestImportDirection holds every file of the module
// (and of the fakeec2/container module) to them, naming the file, the line and the import.

const module = "github.com/karplab/karplab"

// layers rank the module's trees: a package may import packages of its own rank or lower,
// never higher. The root package and the embedded course files import nothing of the lab.
var layers = []struct {
	tree string // module-relative; "" is the root package
	rank int
}{
	{"cmd", 4},
	{"labs", 3},
	{"cluster", 2},
	{"fakeec2", 1},
	{"exercises", 0}, {"solutions", 0}, {"", 0},
}

// testHelpers may be imported by any package's tests, whatever its layer: they hold what
// tests of several layers share (the built binary, the real clients, the listener scan) and
// import nothing above fakeec2 themselves (a rule below keeps them so).
var testHelpers = []string{"cmd/karplab/karplabtest"}

// rule is one doc.go's "must not import", for the package's non-test files (its tests may
// use more, as several doc.go files say). A pattern is a module-relative tree ("labs/..."),
// an exact module-relative package ("cluster"), or an outside path ending in "/..."
// ("k8s.io/..."). allow carves exceptions out of deny.
type rule struct {
	pkg   string // module-relative; a trailing "/..." covers the tree
	deny  []string
	allow []string
	but   []string // packages of pkg's tree the rule leaves out
	why   string   // the doc.go's words, shortened
}

var rules = []rule{
	{pkg: "fakeec2", deny: []string{"k8s.io/...", "sigs.k8s.io/..."},
		why: "fakeec2 knows nothing of Kubernetes"},
	{pkg: "fakeec2/...", deny: []string{"fakeec2", "k8s.io/...", "sigs.k8s.io/..."},
		but: []string{"fakeec2/container", "fakeec2/container/..."}, // runs the whole account in a container
		why: "fakeec2's services are built on fakeec2/account, never on the root that wires them"},
	{pkg: "cluster/controlplane", deny: []string{"..."},
		why: "imports k8s.io/kubernetes, etcd and client-go only"},
	{pkg: "cluster/bootstrap", deny: []string{"...", "sigs.k8s.io/karpenter/...", "github.com/aws/karpenter-provider-aws/..."},
		why: "never the kubelet, Karpenter or the emulator"},
	{pkg: "cluster/deletion", deny: []string{"..."},
		why: "client-go and x/sync only, so any package under cluster may use it"},
	{pkg: "cluster/recorder", deny: []string{"..."},
		why: "client-go only; labs read its file"},
	{pkg: "cluster/metrics", deny: []string{"..."},
		why: "must not import the rest of karplab (tests may use controlplane and kubelet)"},
	{pkg: "cluster/kubelet", deny: []string{"...", "sigs.k8s.io/karpenter/...", "github.com/aws/karpenter-provider-aws/..."}, allow: []string{"cluster/bootstrap"},
		why: "watches EC2 only through the SDK: cluster/bootstrap, never fakeec2 (tests may) or Karpenter"},
	{pkg: "cluster/karpenter", deny: []string{"cluster", "labs/...", "cmd/..."},
		why: "must not import package cluster, labs or cmd"},
	{pkg: "cluster/kind/engine", deny: []string{"..."},
		why: "imports the kind library's cluster package only"},
	{pkg: "cluster/kind/nodeimage", deny: []string{"..."}, allow: []string{"", "cluster/kind/engine", "cluster/rootfs"},
		why: "package karplab (the go.mod), cluster/kind/engine and cluster/rootfs; nothing of the lab's"},
	{pkg: "cluster/rootfs", deny: []string{"..."}, allow: []string{"cluster/kind/engine"},
		why: "cluster/kind/engine only; nothing of the lab's"},
	{pkg: "cluster/kind", deny: []string{"cluster", "cluster/karpenter", "cluster/kubelet", "fakeec2/..."},
		why: "a backend: the kind library, cluster/backend, cluster/existing and its own subpackages"},
	{pkg: "cluster/seats", deny: []string{"..."},
		why: "nothing of the lab's (a seat runs its own karplab inside)"},
	{pkg: "cluster/seats/container", deny: []string{"..."}, allow: []string{"cluster/seats", "cluster/kind/engine"},
		why: "cluster/seats and cluster/kind/engine only"},
	{pkg: "cluster/seats/seatimage", deny: []string{"..."}, allow: []string{"cluster/kind/engine", "cluster/rootfs", "exercises"},
		why: "cluster/kind/engine, cluster/rootfs and package exercises; nothing else of the lab's"},
	{pkg: "labs/workshop", deny: []string{"cluster", "cluster/...", "labs/replay"}, allow: []string{"cluster/seats"},
		why: "of cluster only cluster/seats (a seat runs its own lab), nor labs/replay"},
	{pkg: "labs/evidence", deny: []string{"cluster", "labs", "labs/replay", "labs/lint"},
		why: "the graders read it, never the other way; of cluster only the recorder's and metrics' records"},
	{pkg: "labs/lint", deny: []string{"labs", "labs/evidence", "labs/replay", "cluster"},
		why: "Karpenter's own requirements over NodePools; not the rest of labs"},
	{pkg: "labs/replay", deny: []string{"labs", "labs/evidence", "labs/lint"},
		why: "reads and writes bundles; the graders are not its business"},
	{pkg: "labs", deny: []string{"labs/replay"},
		why: "the graders never drive a replay"},
	{pkg: "cmd/karplab/karplabtest", deny: []string{"cluster/...", "labs/...", "cmd/karplab/app"},
		why: "every layer's tests import it: it may stand no higher than fakeec2"},
}

// exceptions are imports against the rules that are known and scheduled to go, each with
// the issue that removes it. Keep this list short; it is not a place to silence the test.
var exceptions = []struct{ file, imp, why string }{
	{"cluster/replay.go", "labs/replay",
		"the daemon opens and loads a bundle itself; the replay issue (#46) drives it from labs/replay instead"},
}

// goPackage is what `go list -json` says of a package that the test reads.
type goPackage struct {
	ImportPath, Dir           string
	GoFiles, CgoFiles         []string
	TestGoFiles, XTestGoFiles []string
	Error                     *struct{ Err string }
}

func TestImportDirection(t *testing.T) {
	var problems []string
	for _, mod := range []string{".", "fakeec2/container"} {
		for _, p := range listPackages(t, mod) {
			rel := relative(p.ImportPath)
			files := [][]string{append(p.GoFiles, p.CgoFiles...), append(p.TestGoFiles, p.XTestGoFiles...)}
			for i, names := range files {
				for _, name := range names {
					problems = append(problems, checkFile(t, rel, filepath.Join(p.Dir, name), i == 1)...)
				}
			}
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

func listPackages(t *testing.T, mod string) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json", "./...")
	cmd.Dir = mod
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go -C %s list -json ./...: %v\n%s", mod, err, stderr.String())
	}
	var pkgs []goPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("reading go list's output: %v", err)
		}
		if p.Error != nil {
			t.Errorf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatalf("go -C %s list found no packages", mod)
	}
	return pkgs
}

// checkFile returns one line per import of path (a file of package pkg) that the rules forbid.
func checkFile(t *testing.T, pkg, path string, test bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	file := filepath.Join(pkg, filepath.Base(path))
	var out []string
	for _, spec := range f.Imports {
		imp, _ := strconv.Unquote(spec.Path.Value)
		why := forbidden(pkg, imp, test)
		if why == "" || excepted(file, imp) {
			continue
		}
		out = append(out, fmt.Sprintf("%s:%d imports %s: %s", file, fset.Position(spec.Pos()).Line, imp, why))
	}
	return out
}

// forbidden says why package pkg (module-relative) may not import imp, or "" if it may.
func forbidden(pkg, imp string, test bool) string {
	own, inModule := relativeOK(imp)
	if inModule && own == pkg {
		return ""
	}
	if inModule {
		from, to := rank(pkg), rank(own)
		if to > from && !(test && matchesAny(own, testHelpers)) {
			return fmt.Sprintf("%s (layer %d) must not import %s (layer %d): imports point cmd -> labs -> cluster -> fakeec2", tree(pkg), from, tree(own), to)
		}
	}
	if test {
		return ""
	}
	for _, r := range rules {
		if !matches(pkg, r.pkg) || matchesAny(pkg, r.but) {
			continue
		}
		target := imp
		if inModule {
			target = own
		}
		if matchesAny(target, r.deny, inModule) && !matchesAny(target, r.allow, inModule) {
			return fmt.Sprintf("%s must not import it (%s)", r.pkg, r.why)
		}
	}
	return ""
}

// matches says whether module-relative package p is pattern: exact, or a "/..." tree
// ("..." alone is the whole module but for p itself).
func matches(p, pattern string) bool {
	if pattern == "..." {
		return true
	}
	if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
		return strings.HasPrefix(p, tree+"/")
	}
	return p == pattern
}

// matchesAny matches p against patterns; with one more argument false, p is an outside
// import path and only outside patterns (those with a dot in their first element) apply.
func matchesAny(p string, patterns []string, inModule ...bool) bool {
	in := len(inModule) == 0 || inModule[0]
	for _, pattern := range patterns {
		if outside(pattern) != !in {
			continue
		}
		if matches(p, pattern) {
			return true
		}
	}
	return false
}

func outside(pattern string) bool {
	first, _, _ := strings.Cut(pattern, "/")
	return strings.Contains(first, ".") && first != "..."
}

func excepted(file, imp string) bool {
	own, _ := relativeOK(imp)
	for _, e := range exceptions {
		if e.file == file && e.imp == own {
			return true
		}
	}
	return false
}

func relative(importPath string) string {
	r, _ := relativeOK(importPath)
	return r
}

// relativeOK is importPath relative to the module ("" for its root), and whether it is the
// module's (the fakeec2/container module is a tree of it).
func relativeOK(importPath string) (string, bool) {
	if importPath == module {
		return "", true
	}
	r, ok := strings.CutPrefix(importPath, module+"/")
	return r, ok
}

func tree(p string) string {
	first, _, _ := strings.Cut(p, "/")
	return first
}

func rank(p string) int {
	for _, l := range layers {
		if tree(p) == l.tree {
			return l.rank
		}
	}
	return 0
}

// The rules themselves are checked: a rule names a package that exists, and the direction
// check finds what it should in made-up imports.
func TestImportRules(t *testing.T) {
	tests := []struct {
		name, pkg, imp string
		test           bool
		forbidden      bool
	}{
		{name: "down a layer", pkg: "labs", imp: module + "/cluster"},
		{name: "up a layer", pkg: "cluster", imp: module + "/labs/replay", forbidden: true},
		{name: "fakeec2 up to cmd", pkg: "fakeec2/container", imp: module + "/cmd/karplab/app", forbidden: true},
		{name: "a service on the root", pkg: "fakeec2/ssm", imp: module + "/fakeec2", forbidden: true},
		{name: "the container on the root", pkg: "fakeec2/container", imp: module + "/fakeec2"},
		{name: "a test helper from a test", pkg: "fakeec2", imp: module + "/cmd/karplab/karplabtest", test: true},
		{name: "a test helper from code", pkg: "fakeec2", imp: module + "/cmd/karplab/karplabtest", forbidden: true},
		{name: "doc.go forbids within the layer", pkg: "labs/evidence", imp: module + "/cluster", forbidden: true},
		{name: "doc.go allows a record package", pkg: "labs/evidence", imp: module + "/cluster/recorder"},
		{name: "a test may use more", pkg: "cluster/kubelet", imp: module + "/fakeec2", test: true},
		{name: "code may not", pkg: "cluster/kubelet", imp: module + "/fakeec2", forbidden: true},
		{name: "outside pattern", pkg: "fakeec2/ec2", imp: "k8s.io/client-go/rest", forbidden: true},
		{name: "outside allowed", pkg: "cluster/recorder", imp: "k8s.io/client-go/rest"},
		{name: "the root and the course files", pkg: "cluster/kind/nodeimage", imp: module},
		{name: "the workshop over the seats", pkg: "labs/workshop", imp: module + "/cluster/seats"},
		{name: "the workshop never on the daemon", pkg: "labs/workshop", imp: module + "/cluster", forbidden: true},
		{name: "the workshop never on an engine", pkg: "labs/workshop", imp: module + "/cluster/seats/container", forbidden: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why := forbidden(tt.pkg, tt.imp, tt.test)
			if (why != "") != tt.forbidden {
				t.Errorf("forbidden(%s, %s, test %v) = %q, want forbidden %v", tt.pkg, tt.imp, tt.test, why, tt.forbidden)
			}
		})
	}
	for _, r := range rules {
		dir := strings.TrimSuffix(r.pkg, "/...")
		if matches, _ := filepath.Glob(filepath.Join(dir, "doc.go")); len(matches) == 0 {
			t.Errorf("rule for %s: no %s/doc.go states it", r.pkg, dir)
		}
	}
}

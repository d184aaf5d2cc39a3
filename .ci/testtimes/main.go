// Command testtimes reads `go test -json` on stdin and prints what a contributor needs of
// it: a line per package as it ends (ok/FAIL, its time), the output of every failed test
// and failed build, and at the end the slowest tests (by the time they held, the wait for a
// free lab left out) and where the labs' time went, one row per test or subtest (the
// "phase: NAME DURATION" lines tests log). It exits 1 if anything failed or the stream
// ended without a result, so `go test -json ./... | go run ./.ci/testtimes` fails as
// go test would.
//
// Flags: -top N (the slowest N tests, default 10), -json FILE (also keep the raw stream).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// event is one line of test2json's output.
type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string // build-output and build-fail
	Test       string
	Elapsed    float64
	Output     string
}

type testKey struct{ pkg, test string }

type run struct {
	out      io.Writer
	output   map[testKey][]string                 // output kept until the test passes
	builds   map[string][]string                  // build output by import path
	elapsed  map[testKey]float64                  // top-level tests
	subtests map[testKey]float64                  // the sum of a top-level test's subtests' times
	own      map[testKey]float64                  // every test's and subtest's own time (took)
	phases   map[testKey]map[string]time.Duration // by the test (or subtest) that logged them
	pkgTimes map[string]float64
	failed   []string
	ended    map[string]bool
	started  map[string]bool
}

// phaseLine is what a test logs to say how long one of its phases took.
var phaseLine = regexp.MustCompile(`phase: ([a-z][a-z-]*) ([0-9.]+(?:ns|µs|ms|s|m|h)[0-9.a-zµ]*)`)

func main() {
	top := flag.Int("top", 10, "how many of the slowest tests to list")
	raw := flag.String("json", "", "also write the raw go test -json stream to this file")
	flag.Parse()
	in := io.Reader(os.Stdin)
	if *raw != "" {
		f, err := os.Create(*raw)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testtimes:", err)
			os.Exit(2)
		}
		defer f.Close()
		in = io.TeeReader(os.Stdin, f)
	}
	r := &run{out: os.Stdout, output: map[testKey][]string{}, builds: map[string][]string{},
		elapsed: map[testKey]float64{}, subtests: map[testKey]float64{}, own: map[testKey]float64{}, phases: map[testKey]map[string]time.Duration{},
		pkgTimes: map[string]float64{}, ended: map[string]bool{}, started: map[string]bool{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(r.out, sc.Text()) // go vet's or the go command's own words
			continue
		}
		r.take(e)
	}
	r.summary(*top)
	for p := range r.started {
		if !r.ended[p] {
			r.failed = append(r.failed, p+" (no result: the test binary was killed or timed out)")
		}
	}
	if len(r.failed) > 0 {
		sort.Strings(r.failed)
		fmt.Fprintf(r.out, "\nFAILED:\n  %s\n", strings.Join(r.failed, "\n  "))
		os.Exit(1)
	}
}

func (r *run) take(e event) {
	k := testKey{e.Package, e.Test}
	switch e.Action {
	case "build-output":
		r.builds[e.ImportPath] = append(r.builds[e.ImportPath], e.Output)
	case "build-fail":
		fmt.Fprintf(r.out, "FAIL build %s\n%s", e.ImportPath, strings.Join(r.builds[e.ImportPath], ""))
		r.failed = append(r.failed, "build "+e.ImportPath)
	case "start":
		r.started[e.Package] = true
	case "output":
		r.output[k] = append(r.output[k], e.Output)
		if e.Test != "" {
			if m := phaseLine.FindStringSubmatch(e.Output); m != nil {
				if d, err := time.ParseDuration(m[2]); err == nil {
					if r.phases[k] == nil {
						r.phases[k] = map[string]time.Duration{}
					}
					r.phases[k][m[1]] += d
				}
			}
		}
	case "pass", "skip":
		if e.Test == "" {
			r.endPackage(e, "ok  ")
			return
		}
		r.noteElapsed(e)
		delete(r.output, k)
	case "fail":
		if e.Test == "" {
			r.endPackage(e, "FAIL")
			r.failed = append(r.failed, e.Package)
			return
		}
		r.noteElapsed(e)
		if !strings.Contains(e.Test, "/") {
			fmt.Fprintf(r.out, "--- FAIL: %s (%.1fs) in %s\n%s", e.Test, e.Elapsed, e.Package, strings.Join(r.output[k], ""))
		}
		delete(r.output, k)
	}
}

func (r *run) endPackage(e event, verdict string) {
	r.ended[e.Package] = true
	r.pkgTimes[e.Package] = e.Elapsed
	k := testKey{e.Package, ""}
	if verdict == "FAIL" { // the package's own lines: TestMain's, a panic, a timeout
		fmt.Fprint(r.out, strings.Join(r.output[k], ""))
	}
	delete(r.output, k)
	fmt.Fprintf(r.out, "%s %s\t%.1fs\n", verdict, e.Package, e.Elapsed)
}

// noteElapsed keeps a top-level test's time: its own, or the sum of its subtests' when that
// is more (a parent whose subtests run in parallel reports the time of its own body only).
func (r *run) noteElapsed(e event) {
	r.own[testKey{e.Package, e.Test}] = e.Elapsed
	top := testKey{e.Package, topLevel(e.Test)}
	if top.test == e.Test {
		r.elapsed[top] = max(r.elapsed[top], e.Elapsed)
		return
	}
	// Subtest names may hold slashes of their own, so every subtest counts (a nested one
	// twice: the table tests that nest are the quick ones).
	r.subtests[top] += e.Elapsed
	r.elapsed[top] = max(r.elapsed[top], r.subtests[top])
}

func topLevel(test string) string {
	name, _, _ := strings.Cut(test, "/")
	return name
}

// took is a test's time: a top-level test's as noteElapsed keeps it (its subtests' sum when
// that is more), a subtest's own.
func (r *run) took(k testKey) float64 {
	if k.test == topLevel(k.test) {
		return r.elapsed[k]
	}
	return r.own[k]
}

// held is how long a test ran once it had what it queued for (its "queue" phase, the
// labs' wait for a free lab, left out): what it costs the run.
func (r *run) held(k testKey) float64 {
	return r.took(k) - r.phases[k]["queue"].Seconds()
}

// summary lists the slowest tests by held time, then the phases of the tests that logged
// any, one row per test or subtest. A top-level test whose subtests logged phases is left
// out of the first list: its subtests are listed instead.
func (r *run) summary(n int) {
	parents := map[testKey]bool{}
	for k := range r.phases {
		if top := (testKey{k.pkg, topLevel(k.test)}); top != k {
			parents[top] = true
		}
	}
	var keys []testKey
	for k := range r.elapsed {
		if !parents[k] {
			keys = append(keys, k)
		}
	}
	for k := range r.phases {
		if k.test != topLevel(k.test) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return r.held(keys[i]) > r.held(keys[j]) })
	if len(keys) > n {
		keys = keys[:n]
	}
	fmt.Fprintf(r.out, "\nthe %d slowest tests (seconds, the wait for a free lab left out):\n", len(keys))
	tw := tabwriter.NewWriter(r.out, 0, 0, 2, ' ', 0)
	for _, k := range keys {
		fmt.Fprintf(tw, "%7.1fs\t%s\t%s\n", r.held(k), short(k.pkg), k.test)
	}
	tw.Flush()
	if len(r.phases) == 0 {
		return
	}
	names := map[string]bool{}
	var tests []testKey
	for k, ph := range r.phases {
		tests = append(tests, k)
		for p := range ph {
			names[p] = true
		}
	}
	cols := make([]string, 0, len(names))
	for p := range names {
		cols = append(cols, p)
	}
	sort.Strings(cols)
	sort.Slice(tests, func(i, j int) bool { return r.held(tests[i]) > r.held(tests[j]) })
	fmt.Fprintln(r.out, "\nwhere the tests' time went (seconds; other = not in a logged phase):")
	tw = tabwriter.NewWriter(r.out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "test\t total\t %s\t other\t\n", strings.Join(cols, "\t "))
	sums := map[string]time.Duration{}
	var total, other time.Duration
	for _, k := range tests {
		el := time.Duration(r.took(k) * float64(time.Second))
		rest := el
		fmt.Fprintf(tw, "%s\t %.0f", k.test, el.Seconds())
		for _, c := range cols {
			d := r.phases[k][c]
			rest -= d
			sums[c] += d
			fmt.Fprintf(tw, "\t %.0f", d.Seconds())
		}
		total += el
		other += rest
		fmt.Fprintf(tw, "\t %.0f\t\n", rest.Seconds())
	}
	fmt.Fprintf(tw, "all\t %.0f", total.Seconds())
	for _, c := range cols {
		fmt.Fprintf(tw, "\t %.0f", sums[c].Seconds())
	}
	fmt.Fprintf(tw, "\t %.0f\t\n", other.Seconds())
	tw.Flush()
}

func short(pkg string) string {
	if i := strings.Index(pkg, "/karplab/karplab/"); i >= 0 {
		return pkg[i+len("/karplab/karplab/"):]
	}
	return pkg
}

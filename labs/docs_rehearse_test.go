package labs

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A document is rehearsed as its reader would follow it: every shell line of its code blocks
// (indented blocks, and ```sh fences), in order, after eval of the lab's env, in one working
// directory. An HTML comment right before a code block annotates that block; the reader
// never sees it:
//
//	<!-- rehearse: skip REASON -->     the block is not run (a diagram, `make test`, `stop`)
//	<!-- rehearse: fails -->           each line must exit non-zero (a check before the fix)
//	<!-- rehearse: until 3m -->        each line is retried until it exits 0
//	<!-- rehearse: solve -->           first copy the lab's solution over the reader's copy
//	<!-- rehearse: wait 3m SHELL -->   first wait until SHELL exits 0 (what the reader watches for)
//	<!-- rehearse: with TEXT := SHELL --> replace TEXT (a placeholder) by what SHELL prints
//
// Several directives may share one comment, one per line. A line with a placeholder (<...>,
// i-..., vol-..., ENCODED-...) that no `with` fills fails the rehearsal, as does a line no
// directive explains that exits non-zero.

// docBlockStep is one command line of a document and how to run it.
type docBlockStep struct {
	where, line string
	skip        string // the reason, when the block is not run
	fails       bool
	until       time.Duration
	solve       bool // copy the solution in before this line (the block's first)
	wait        string
	waitFor     time.Duration
	with        [][2]string
}

var (
	rehearseComment = regexp.MustCompile(`^<!--\s*rehearse:(.*)$`)
	placeholderRe   = regexp.MustCompile(`<[^>]+>|\b(i|vol|snap|eni)-\.\.\.|ENCODED-MESSAGE`)
)

// parseDoc reads a document's command lines with their annotations.
func parseDoc(name, text string) ([]docBlockStep, error) {
	var steps []docBlockStep
	var pending []string // the directives of the next (or current) code block
	var inComment, inFence, shellFence, inIndented, prevBlank, blockStart bool
	var cont *docBlockStep
	n := 0
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		n++
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		switch {
		case cont != nil: // a continued command line
			cont.line = strings.TrimSpace(strings.TrimSuffix(cont.line, `\`)) + " " + line
			if !strings.HasSuffix(line, `\`) {
				steps, cont = append(steps, *cont), nil
			}
			continue
		case inComment:
			body, end := strings.CutSuffix(line, "-->")
			if body = strings.TrimSpace(body); body != "" {
				pending = append(pending, body)
			}
			inComment = !end
			continue
		case inFence && strings.HasPrefix(line, "```"):
			inFence, pending = false, nil
			continue
		case inFence:
			if !shellFence {
				continue
			}
		case strings.HasPrefix(line, "```"):
			inFence, blockStart = true, true
			lang := strings.TrimPrefix(line, "```")
			shellFence = lang == "sh" || lang == "bash" || lang == "shell"
			continue
		case line == "":
			prevBlank = true
			continue
		case strings.HasPrefix(raw, "    ") && (inIndented || prevBlank):
			if !inIndented {
				inIndented, blockStart = true, true
			}
		default: // prose
			prevBlank = false
			if inIndented {
				inIndented, pending = false, nil
			}
			if m := rehearseComment.FindStringSubmatch(line); m != nil {
				body, end := strings.CutSuffix(strings.TrimSpace(m[1]), "-->")
				if body = strings.TrimSpace(body); body != "" {
					pending = append(pending, body)
				}
				inComment = !end
			} else if len(pending) > 0 {
				return nil, fmt.Errorf("%s:%d: a rehearse annotation must come right before its code block", name, n)
			}
			continue
		}
		prevBlank = false
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		st := docBlockStep{where: fmt.Sprintf("%s:%d", name, n), line: line}
		for _, d := range pending {
			if err := applyDirective(&st, d, blockStart); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
		}
		blockStart = false
		if strings.HasSuffix(line, `\`) {
			cont = &st
			continue
		}
		steps = append(steps, st)
	}
	if inFence || inComment || cont != nil {
		return nil, fmt.Errorf("%s: an unclosed code fence, comment or continued line", name)
	}
	return steps, nil
}

// applyDirective sets one annotation on a step; solve applies to the block's first line only.
func applyDirective(st *docBlockStep, d string, first bool) error {
	verb, arg, _ := strings.Cut(d, " ")
	arg = strings.TrimSpace(arg)
	switch verb {
	case "skip":
		if arg == "" {
			return fmt.Errorf("rehearse: skip needs a reason")
		}
		st.skip = arg
	case "fails":
		st.fails = true
	case "until":
		d, err := time.ParseDuration(arg)
		if err != nil {
			return fmt.Errorf("rehearse: until %q: %w", arg, err)
		}
		st.until = d
	case "solve":
		st.solve = first
	case "wait":
		d, shell, _ := strings.Cut(arg, " ")
		timeout, err := time.ParseDuration(d)
		if err != nil || strings.TrimSpace(shell) == "" {
			return fmt.Errorf("rehearse: wait %q: want DURATION SHELL", arg)
		}
		if first {
			st.waitFor, st.wait = timeout, strings.TrimSpace(shell)
		}
	case "with":
		text, shell, ok := strings.Cut(arg, ":=")
		if !ok {
			return fmt.Errorf("rehearse: with %q: want TEXT := SHELL", arg)
		}
		st.with = append(st.with, [2]string{strings.TrimSpace(text), strings.TrimSpace(shell)})
	default:
		return fmt.Errorf("unknown rehearse directive %q (skip, fails, until, solve, wait, with)", verb)
	}
	return nil
}

// command is the step's line with each placeholder replaced by its value (what its SHELL
// printed); "" and the placeholder when one is left.
func (st docBlockStep) command(values []string) (string, string) {
	line, code := st.line, st.line
	// Comments are the reader's; a placeholder in one is no command.
	if i := strings.Index(code, " #"); i >= 0 {
		code = code[:i]
	}
	for i, w := range st.with {
		line = strings.ReplaceAll(line, w[0], values[i])
		code = strings.ReplaceAll(code, w[0], "")
	}
	if m := placeholderRe.FindString(code); m != "" {
		return "", m
	}
	return line, ""
}

// withShells lists the SHELL of each `with`, standing in for its value where none is run.
func (st docBlockStep) withShells() []string {
	var out []string
	for _, w := range st.with {
		out = append(out, w[1])
	}
	return out
}

// rehearseDoc runs doc's steps against the lab as the test left it, labName being the document's
// own (whose solution `solve` copies in). The working directory starts empty, with bin/karplab
// there as in a checkout; `cd DIR` lines move it.
func rehearseDoc(t *testing.T, doc, labName string) {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := parseDoc(filepath.Base(filepath.Dir(doc))+"/"+filepath.Base(doc), string(b))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binary.exe, filepath.Join(dir, "bin", "karplab")); err != nil {
		t.Fatal(err)
	}
	cwd := dir
	for _, st := range steps {
		if st.skip != "" {
			continue
		}
		if st.solve {
			solveInto(t, labName, cwd)
		}
		if st.wait != "" {
			start := time.Now()
			_, out, err := runDocStep(t, cwd, docBlockStep{line: st.wait, until: st.waitFor})
			t.Logf("%s: waited %s for: %s", st.where, time.Since(start).Round(100*time.Millisecond), st.wait)
			if err != nil {
				t.Fatalf("%s: waited %s for %s: %v\n%s", st.where, st.waitFor, st.wait, err, out)
			}
		}
		if _, left := st.command(st.withShells()); left != "" {
			t.Fatalf("%s: %s\n  the placeholder %q has no <!-- rehearse: with %s := SHELL --> annotation", st.where, st.line, left, left)
		}
		if target, ok := strings.CutPrefix(st.line, "cd "); ok {
			cwd = filepath.Join(cwd, strings.Fields(target)[0])
			continue
		}
		start := time.Now()
		line, out, err := runDocStep(t, cwd, st)
		t.Logf("%s (%s): %s", st.where, time.Since(start).Round(100*time.Millisecond), line)
		switch {
		case st.fails && err == nil:
			t.Errorf("%s: %s\n  succeeded; the document says it fails here\n%s", st.where, line, out)
		case !st.fails && err != nil:
			t.Fatalf("%s: %s\n  %v\n%s", st.where, line, err, out)
		}
	}
}

// runDocStep runs one line in cwd, its placeholders filled (a watch for three seconds),
// retrying for st.until: placeholders are filled afresh on each try.
func runDocStep(t *testing.T, cwd string, st docBlockStep) (line, out string, err error) {
	f := strings.Fields(st.line)
	watch := slices.Contains(f, "-w") || slices.Contains(f, "--watch")
	deadline := time.Now().Add(st.until)
	for {
		line, out, err = runDocLine(t, cwd, st, watch)
		if err == nil || time.Now().After(deadline) {
			return line, out, err
		}
		time.Sleep(3 * time.Second)
	}
}

func runDocLine(t *testing.T, cwd string, st docBlockStep, watch bool) (string, string, error) {
	var values []string
	for _, w := range st.with {
		out, err := runShell(t, docBinDirs(t), `cd "$2" && `+w[1], cwd)
		v := strings.Join(strings.Fields(out), " ")
		if err == nil && v == "" {
			err = fmt.Errorf("it printed nothing")
		}
		if err != nil {
			return st.line, out, fmt.Errorf("the value of %s (%s): %w", w[0], w[1], err)
		}
		values = append(values, v)
	}
	line, _ := st.command(values)
	script := `cd "$2" && ` + line
	if watch {
		script = `cd "$2" && timeout 3 ` + line
	}
	out, err := runShell(t, docBinDirs(t), script, cwd)
	if ee, ok := err.(*exec.ExitError); ok && watch && ee.ExitCode() == 124 {
		err = nil
	}
	return line, out, err
}

// docBinDirs is the PATH a document's lines find aws and kubectl on: Debian's aws CLI, as
// runScript's, then kubectlDir.
func docBinDirs(t *testing.T) string {
	return debianAWSDir(t) + ":" + kubectlDir(t)
}

// solveInto copies the lab's solution files over the reader's copy of the exercise: ./LAB
// when the document copied it there, else the working directory.
func solveInto(t *testing.T, lab, cwd string) {
	t.Helper()
	target := filepath.Join(cwd, lab)
	if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
		target = cwd
	}
	files, err := filepath.Glob(filepath.Join("..", "solutions", lab, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("lab %s has no solution files (%v)", lab, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(target, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestParseDoc(t *testing.T) {
	doc := "# Lab\n\n1. Stage it:\n\n       karplab lab run x\n       kubectl get pods -w   # watch\n\n" +
		"2. Fix it.\n\n   <!-- rehearse: solve\n     until 2m -->\n\n       kubectl apply -f x/a.yaml\n       karplab check x\n\n" +
		"Prose.\n\n```sh\naws ec2 describe-instances \\\n  --filters Name=tag:a,Values=b\n# a comment\n```\n\n```\nnot a command\n```\n\n" +
		"<!-- rehearse: skip a diagram -->\n\n    A -> B\n\nEnd.\n"
	got, err := parseDoc("doc.md", doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []docBlockStep{
		{where: "doc.md:5", line: "karplab lab run x"},
		{where: "doc.md:6", line: "kubectl get pods -w   # watch"},
		{where: "doc.md:13", line: "kubectl apply -f x/a.yaml", solve: true, until: 2 * time.Minute},
		{where: "doc.md:14", line: "karplab check x", until: 2 * time.Minute},
		{where: "doc.md:19", line: "aws ec2 describe-instances --filters Name=tag:a,Values=b"},
		{where: "doc.md:30", line: "A -> B", skip: "a diagram"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(docBlockStep{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{
		"<!-- rehearse: until soon -->\n\n    x\n",
		"<!-- rehearse: frobnicate -->\n\n    x\n",
		"<!-- rehearse: fails -->\nProse in between.\n\n    x\n",
		"```sh\nx\n",
	} {
		if _, err := parseDoc("bad.md", bad); err == nil {
			t.Errorf("parseDoc(%q) = nil error", bad)
		}
	}
}

func TestDocStepPlaceholders(t *testing.T) {
	tests := []struct {
		name       string
		st         docBlockStep
		want, left string
	}{
		{name: "plain", st: docBlockStep{line: "kubectl get pods"}, want: "kubectl get pods"},
		{name: "angle placeholder", st: docBlockStep{line: "kubectl delete nodeclaim <each stuck one>"}, left: "<each stuck one>"},
		{name: "id placeholder", st: docBlockStep{line: "aws ec2 terminate-instances --instance-ids i-..."}, left: "i-..."},
		{name: "in a comment", st: docBlockStep{line: "karplab evidence   # see <the table>"}, want: "karplab evidence   # see <the table>"},
		{name: "filled", st: docBlockStep{line: "aws ec2 terminate-instances --instance-ids i-...", with: [][2]string{{"i-...", "$(leaked)"}}},
			want: "aws ec2 terminate-instances --instance-ids i-0123"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, left := tt.st.command([]string{"i-0123"})
			if got != tt.want || left != tt.left {
				t.Errorf("command() = %q, %q; want %q, %q", got, left, tt.want, tt.left)
			}
		})
	}
}

// docToRehearse is a document rehearsed against a lab, with the lab it stages.
type docToRehearse struct{ doc, lab string }

// docsToRehearse are the README, on the happy path, and every lab's own README: a new lab's
// document is rehearsed without a line here.
func docsToRehearse() []docToRehearse {
	out := []docToRehearse{{"../README.md", "happy-path"}}
	for _, l := range All() {
		out = append(out, docToRehearse{"../exercises/" + l.Name + "/README.md", l.Name})
	}
	return out
}

// Every document parses, and no line has a placeholder no annotation fills (without a lab:
// a doc edit that breaks this fails make test-short too).
func TestDocsAreRehearsable(t *testing.T) {
	for _, d := range docsToRehearse() {
		b, err := os.ReadFile(d.doc)
		if err != nil {
			t.Fatalf("every lab has a README to rehearse: %v", err)
		}
		steps, err := parseDoc(d.doc, string(b))
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range steps {
			if _, left := st.command(st.withShells()); left != "" && st.skip == "" {
				t.Errorf("%s: %s: the placeholder %q has no <!-- rehearse: with %s := SHELL --> annotation", st.where, st.line, left, left)
			}
		}
	}
}

// TestIntegrationDocsRehearsed follows each document, line by line, on a fresh lab (one:
// -run 'TestIntegrationDocsRehearsed/exercises/leak').
func TestIntegrationDocsRehearsed(t *testing.T) {
	t.Parallel() // its documents queue for labs with the other tests
	for _, d := range docsToRehearse() {
		t.Run(strings.TrimPrefix(filepath.Dir(d.doc), "../"), func(t *testing.T) {
			freshLab(t)
			start := time.Now()
			rehearseDoc(t, d.doc, d.lab)
			t.Logf("%s rehearsed in %s", d.doc, time.Since(start).Round(time.Second))
		})
	}
}

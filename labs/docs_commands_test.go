package labs

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// docCommand is one aws command line of the course's documents, continuations joined.
type docCommand struct {
	where, line string
}

// docCommands reads every aws command of the README, the exercises' READMEs and the seed.
func docCommands(t *testing.T) []docCommand {
	t.Helper()
	files := []string{"../README.md", "../../shared/seed/karpenter-node-provisioning.txt"}
	more, err := filepath.Glob("../exercises/*/README.md")
	if err != nil {
		t.Fatal(err)
	}
	return commandLines(t, "aws", append(files, more...)...)
}

// commandLines reads the command lines of program (e.g. "kubectl") in files, continuations
// joined, each once.
func commandLines(t *testing.T, program string, files ...string) []docCommand {
	t.Helper()
	var out []docCommand
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) && strings.Contains(f, "shared") {
			continue // a checkout without the course's shared directory
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		n := 0
		for sc.Scan() {
			n++
			line := strings.TrimSpace(sc.Text())
			if !strings.HasPrefix(line, program+" ") {
				continue
			}
			at := n
			for strings.HasSuffix(line, `\`) && sc.Scan() {
				n++
				line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(sc.Text())
			}
			if !seen[line] {
				seen[line] = true
				out = append(out, docCommand{where: filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f) + ":" + strconv.Itoa(at), line: line})
			}
		}
	}
	return out
}

var awsErrorCode = regexp.MustCompile(`An error occurred \(([A-Za-z0-9.]+)\)`)

// TestIntegrationDocsAWSCommandsServed runs every aws command the README, the exercises and
// the seed print, verbatim, with both aws CLIs after eval of the lab's env, on a staged
// happy path. Each must succeed or get a service's own error (a placeholder such as i-...
// is malformed, as on AWS); none may be an unknown action, a parameter the CLI rejects, or
// a call that left the lab.
func TestIntegrationDocsAWSCommandsServed(t *testing.T) {
	e := freshLab(t)
	l, _ := Get("happy-path")
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Solution: true}); err != nil {
		t.Fatal(err)
	}
	cmds := docCommands(t)
	if len(cmds) < 15 { // a floor: fewer means the extraction broke
		t.Fatalf("found only %d aws commands in the documents", len(cmds))
	}
	parent := t
	for _, cli := range karplabtest.AWSCLIs(t) {
		t.Run(cli.Name, func(t *testing.T) {
			shareLab(parent, t)
			shim := cli.ShimDir(t)
			for _, c := range cmds {
				out, err := runShell(t, shim, c.line)
				if err == nil {
					continue
				}
				m := awsErrorCode.FindStringSubmatch(out)
				switch {
				case m == nil:
					t.Errorf("%s: %s\n  failed without a service error: %v\n%s", c.where, c.line, err, out)
				case m[1] == "InvalidAction" || m[1] == "UnknownOperationException" || strings.HasPrefix(m[1], "Unsupported"):
					t.Errorf("%s: %s\n  the lab does not serve it: %s", c.where, c.line, out)
				}
			}
		})
	}
}

// kubectlDir holds the kubectl to rehearse with: the machine's, else a shim to the one built
// into karplab (the README offers both).
func kubectlDir(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/kubectl"); err == nil {
		return "/usr/bin"
	}
	dir := t.TempDir()
	shim := "#!/bin/sh\nexec " + binary.exe + " kubectl \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

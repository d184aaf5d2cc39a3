package karplabtest

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"

	"os"
	"path/filepath"
	"testing"

	"github.com/karplab/karplab/fakeec2"
)

// A pyenv shim is replaced by the program pyenv says it runs; anything else is kept.
func TestUnshim(t *testing.T) {
	dir := t.TempDir()
	pyenv := filepath.Join(dir, "libexec", "pyenv")
	real := filepath.Join(dir, "versions", "3.11.7", "bin", "aws")
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(pyenv, "#!/bin/sh\n[ \"$1 $2\" = 'which aws' ] && echo "+real+"\n")
	shim := filepath.Join(dir, "shims", "aws")
	write(shim, "#!/usr/bin/env bash\nset -e\nexec \""+pyenv+"\" exec \"$program\" \"$@\"\n")
	plain := filepath.Join(dir, "bin", "aws")
	write(plain, "#!/usr/bin/python3\nimport awscli\n")
	if got := unshim(shim); got != real {
		t.Errorf("unshim(shim) = %q, want %q", got, real)
	}
	if got := unshim(plain); got != plain {
		t.Errorf("unshim(plain) = %q, want it kept", got)
	}
}

// Run (the CLI's Python kept up) answers as the CLI in a process of its own does: the same
// output, the same error text and exit code, a paginated and a waiter call, on each CLI.
func TestRunAnswersAsAProcessDoes(t *testing.T) {
	for _, cli := range AWSCLIs(t) {
		t.Run(cli.Name, func(t *testing.T) {
			var opts fakeec2.Options
			OnRealClock(&opts)
			_, url := ServeEmulator(t, opts)
			calls := [][]string{
				{"ec2", "describe-availability-zones", "--query", "AvailabilityZones[].ZoneName", "--output", "text"},
				{"ec2", "describe-instance-types", "--max-items", "3", "--query", "InstanceTypes[].InstanceType"},
				{"ec2", "terminate-instances", "--instance-ids", "i-0123456789abcdef0"},
				{"ec2", "describe-volumes", "--filters", "Name=nosuch,Values=x"},
				{"ec2", "wait", "volume-available", "--volume-ids", "vol-0123456789abcdef0"},
				{"ec2", "describe-instances", "--no-such-flag"},
				{"sts", "get-caller-identity"},
			}
			shim := cli.ShimDir(t)
			for _, args := range calls {
				wantOut, wantErr, wantExit := cli.RunProcess(t, url, "AKIARUNTEST", args...)
				gotOut, gotErr, gotExit := cli.Run(t, url, "AKIARUNTEST", args...)
				if gotOut != wantOut || normalize(gotErr) != normalize(wantErr) || fmt.Sprint(gotExit) != fmt.Sprint(wantExit) {
					t.Errorf("aws %s:\nprocess: %v\n%s%s\nkept up: %v\n%s%s", strings.Join(args, " "), wantExit, wantOut, wantErr, gotExit, gotOut, gotErr)
				}
				// The same through a shell that finds the shim's aws first.
				sh := exec.Command("sh", "-c", `aws --endpoint-url "$0" --output json "$@"`, url)
				sh.Args = append(sh.Args, args...)
				env, _ := cli.runEnv(t, url, "AKIARUNTEST", nil)
				sh.Env = append(env, "PATH="+shim+":"+os.Getenv("PATH"))
				var stdout, stderr strings.Builder
				sh.Stdout, sh.Stderr = &stdout, &stderr
				err := sh.Run()
				var code any = nil
				if ee, ok := err.(*exec.ExitError); ok {
					code = &ExitCodeError{Code: ee.ExitCode()}
				}
				if stdout.String() != wantOut || normalize(stderr.String()) != normalize(wantErr) || fmt.Sprint(code) != fmt.Sprint(wantExit) {
					t.Errorf("sh -c 'aws %s' with the shim:\nprocess: %v\n%s%s\nshim: %v\n%s%s", strings.Join(args, " "), wantExit, wantOut, wantErr, err, stdout.String(), stderr.String())
				}
			}
			// A second call on the same Python still answers with its own arguments.
			out, _, err := cli.Run(t, url, "AKIASECOND", "sts", "get-caller-identity", "--query", "Arn", "--output", "text")
			if err != nil || !strings.Contains(out, "AKIASECOND") {
				t.Errorf("sts get-caller-identity as AKIASECOND: %v, %q", err, out)
			}
		})
	}
}

// normalize drops what differs between any two calls: request IDs.
func normalize(s string) string {
	return requestID.ReplaceAllString(s, "REQUEST-ID")
}

var requestID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// BenchmarkAWSCLI compares a call in a process of its own with one on a kept-up Python.
func BenchmarkAWSCLI(b *testing.B) {
	var opts fakeec2.Options
	OnRealClock(&opts)
	_, url := ServeEmulator(b, opts)
	for _, cli := range AWSCLIs(b) {
		for _, way := range []struct {
			name string
			run  func(testing.TB, string, string, ...string) (string, string, error)
		}{{"process", cli.RunProcess}, {"kept-up", cli.Run}} {
			b.Run(cli.Name+"/"+way.name, func(b *testing.B) {
				for b.Loop() {
					if _, stderr, err := way.run(b, url, "AKIABENCH", "ec2", "describe-instances"); err != nil {
						b.Fatalf("%v: %s", err, stderr)
					}
				}
			})
		}
	}
}

package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/karplab/karplab/cluster/kind/kindtest"
	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// workshopRow is what workshop status --json and grades --json print, as read here.
type workshopRow struct {
	Seat    int    `json:"seat"`
	Name    string `json:"name"`
	State   string `json:"state"`
	Learner string `json:"learner"`
	Lab     string `json:"lab"`
	Fresh   bool   `json:"fresh"`
	Grade   *struct {
		Lab    string   `json:"lab"`
		Passed bool     `json:"passed"`
		Failed []string `json:"failed"`
		Error  string   `json:"error"`
	} `json:"grade"`
}

func rows(t *testing.T, r result) []workshopRow {
	t.Helper()
	var out []workshopRow
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("reading %q: %v (stderr %s)", r.stdout, err, r.stderr)
	}
	return out
}

// Each refusal of workshop up is one line, exit 2, and makes nothing: no room, no seat.
func TestWorkshopRefusals(t *testing.T) {
	tests := []struct {
		name    string
		engines map[string]kindtest.Engine
		args    []string
		want    string
	}{
		{name: "no engine", args: []string{"--seats", "2"}, want: "a workshop's seats need a container engine (Docker or podman), and none is on PATH"},
		{name: "no engine runs a seat", engines: map[string]kindtest.Engine{"docker": {Version: "Docker version 28.2.2", Run: kindtest.RunCapsRefused}},
			args: []string{"--seats", "2"}, want: "no container engine here can run a seat (a container with no network, no privileges and a memory cap): Docker cannot run a seat"},
		{name: "an unknown lab", engines: map[string]kindtest.Engine{"docker": {Version: "Docker version 28.2.2", Run: kindtest.RunAllowed}},
			args: []string{"--seats", "2", "--labs", "happy-path,no-such-lab"}, want: `--labs: no lab named "no-such-lab"`},
		{name: "beyond the host's memory", engines: map[string]kindtest.Engine{"docker": {Version: "Docker version 28.2.2", Run: kindtest.RunAllowed}},
			args: []string{"--seats", "64", "--memory", "65536"}, want: "64 new seats of 65536 MiB need 4194304 MiB, and this host has"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kindtest.FakeEngines(t, tt.engines)
			l := newLab(t)
			r := l.run(append([]string{"workshop", "up"}, tt.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("workshop up %q = exit %d, stderr:\n%s\nwant exit 2 and one line saying %q", tt.args, r.code, r.stderr, tt.want)
			}
			if _, err := os.Stat(filepath.Join(l.home, "workshop")); err == nil {
				t.Errorf("a refused up left %s", filepath.Join(l.home, "workshop"))
			}
		})
	}
	l := newLab(t)
	if r := l.run("workshop", "exec", "1", "--", "true"); r.code != 2 || !strings.Contains(r.stderr, "no workshop here (karplab workshop up --seats N starts one)") {
		t.Errorf("exec without a workshop = exit %d: %s", r.code, r.stderr)
	}
	if r := l.run("workshop", "--help"); r.code != 0 || !strings.Contains(r.stdout, "karplab workshop exec 3 -- kubectl get nodes") {
		t.Errorf("workshop --help = exit %d:\n%s", r.code, r.stdout)
	}
}

// TestIntegrationWorkshop runs a room of two seats as an instructor would, on this host's
// engine: the image built (then found built), two seats up with happy-path staged, each
// answering kubectl and aws from its own lab, seat 1 solved and graded passing while seat 2
// fails, seat 1's container killed while seat 2 answers and seat 1's grade stays, up again
// (no flags: the room's own) restoring it, and down leaving no container, no state and no
// process.
func TestIntegrationWorkshop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if _, err := exec.LookPath("docker"); err != nil {
		if _, err := exec.LookPath("podman"); err != nil {
			karplabtest.RequireClient(t, "a container engine for the workshop's seats (Docker or podman)")
		}
	}
	l := newLab(t)
	began := time.Now()
	step := func(what string) { t.Logf("%6.1fs %s", time.Since(began).Seconds(), what) }
	img := l.mustRun("workshop", "image")
	step("workshop image: " + strings.TrimSpace(img.stdout))
	again := time.Now()
	if r := l.mustRun("workshop", "image"); r.stdout != img.stdout || strings.Contains(r.stderr, "Building") {
		t.Errorf("a second workshop image built again or named another image:\n%s%s", r.stdout, r.stderr)
	}
	step("workshop image again (" + time.Since(again).Round(time.Millisecond).String() + ")")
	engineName := "docker"
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(l.home, "workshop")); err == nil {
			l.run("workshop", "down")
		}
	})
	up := l.run("workshop", "up", "--seats", "2", "--labs", "happy-path", "--learners", "ana,ben")
	if up.code != 0 {
		t.Fatalf("workshop up = exit %d:\n%s", up.code, up.stderr)
	}
	step("workshop up --seats 2 --labs happy-path")
	st := rows(t, l.mustRun("workshop", "status", "--json"))
	if len(st) != 2 || st[0].State != "running" || st[1].State != "running" || st[0].Learner != "ana" || st[1].Lab != "happy-path" {
		t.Fatalf("status = %+v, want two running seats, ana's first, happy-path staged", st)
	}
	if out, _ := exec.Command("podman", "ps", "-q", "--filter", "name="+st[0].Name).Output(); len(out) > 0 {
		engineName = "podman"
	}
	if r := l.run("workshop", "exec", "1", "--", "kubectl", "get", "nodes"); r.code != 0 {
		t.Errorf("exec 1 -- kubectl get nodes = exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := l.run("workshop", "exec", "2", "--", "aws", "ec2", "describe-instances"); r.code != 0 || !strings.Contains(r.stdout, "Reservations") {
		t.Errorf("exec 2 -- aws ec2 describe-instances = exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := l.run("workshop", "exec", "2", "--", "sh", "-c", "exit 3"); r.code != 3 {
		t.Errorf("exec 2 -- sh -c 'exit 3' = exit %d, want 3", r.code)
	}
	step("exec kubectl, aws, exit code")
	if r := l.run("workshop", "exec", "1", "--", "karplab", "lab", "run", "happy-path", "--solution"); r.code != 0 {
		t.Fatalf("exec 1 -- karplab lab run happy-path --solution = exit %d:\n%s", r.code, r.stderr)
	}
	step("seat 1 solved happy-path")
	g := l.run("workshop", "grades", "--json")
	gr := rows(t, g)
	if g.code != 1 || len(gr) != 2 || gr[0].Grade == nil || !gr[0].Grade.Passed || gr[1].Grade == nil || gr[1].Grade.Passed || gr[1].Grade.Error != "" {
		t.Fatalf("grades = exit %d %s, want exit 1, seat 1 passing and seat 2 graded failing", g.code, g.stdout)
	}
	if r := l.run("workshop", "grades", "--csv"); !strings.HasPrefix(r.stdout, "seat,learner,state,lab,passed") || !strings.Contains(r.stdout, "1,ana,running,happy-path,true") {
		t.Errorf("grades --csv:\n%s", r.stdout)
	}
	step("grades: seat 1 passes, seat 2 fails")

	killAndRestore(t, l, engineName, st[0].Name, step)
	status := l.mustRun("workshop", "status")
	t.Logf("workshop status:\n%s", status.stdout)

	id := strings.TrimPrefix(strings.TrimSuffix(st[0].Name, "-1"), "karplab-seat-")
	if r := l.run("workshop", "down"); r.code != 0 {
		t.Fatalf("down = exit %d: %s", r.code, r.stderr)
	}
	step("down")
	if out, _ := exec.Command(engineName, "ps", "-a", "-q", "--filter", "label=karplab.workshop="+id).Output(); len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("down left containers %s", out)
	}
	if _, err := os.Stat(filepath.Join(l.home, "workshop")); err == nil {
		t.Error("down left the workshop's state")
	}
	if out, _ := exec.Command("pgrep", "-f", "karplab-seat-"+id).Output(); len(out) > 0 {
		t.Errorf("down left processes %s", out)
	}
}

// killAndRestore kills seat 1's container: seat 2 answers, seat 1's last grade stays, exec
// in seat 1 says what to do; then up, with no flags, brings it back.
func killAndRestore(t *testing.T, l *lab, engineName, seat1 string, step func(string)) {
	t.Helper()
	if out, err := exec.Command(engineName, "kill", seat1).CombinedOutput(); err != nil {
		t.Fatalf("%s kill %s: %v %s", engineName, seat1, err, out)
	}
	if r := l.run("workshop", "exec", "2", "--", "kubectl", "get", "nodepools"); r.code != 0 {
		t.Errorf("with seat 1 killed, exec 2 -- kubectl get nodepools = exit %d:\n%s", r.code, r.stderr)
	}
	if r := l.run("workshop", "exec", "1", "--", "true"); r.code != 2 || !strings.Contains(r.stderr, "seat 1 ("+seat1+"): the seat is not running; karplab workshop up starts it again") {
		t.Errorf("exec in the killed seat = exit %d: %s", r.code, r.stderr)
	}
	gr := rows(t, l.run("workshop", "grades", "--json"))
	if gr[0].State != "exited" || gr[0].Fresh || gr[0].Grade == nil || !gr[0].Grade.Passed || !gr[1].Fresh || gr[1].Grade.Passed {
		t.Errorf("grades with seat 1 killed = %s, want seat 1's last grade (passed) kept and seat 2 graded now", l.run("workshop", "grades", "--json").stdout)
	}
	step("seat 1 killed: seat 2 answers, seat 1's grade stays")
	if r := l.run("workshop", "up"); r.code != 0 || !strings.Contains(r.stderr, "seat 1: starting "+seat1+" again") {
		t.Fatalf("up again = exit %d:\n%s", r.code, r.stderr)
	}
	if r := l.run("workshop", "exec", "1", "--", "kubectl", "get", "nodes"); r.code != 0 {
		t.Errorf("after up again, exec 1 -- kubectl get nodes = exit %d:\n%s", r.code, r.stderr)
	}
	step("up again restored seat 1")
}

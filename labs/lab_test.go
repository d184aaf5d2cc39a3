package labs

import (
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/exercises"
	"github.com/karplab/karplab/solutions"
)

// positionProblems says which labs have no course position and which share one.
func positionProblems(ls []*Lab) []string {
	var problems []string
	byPos := map[int][]string{}
	for _, l := range ls {
		if l.Position < 1 {
			problems = append(problems, fmt.Sprintf("lab %s has no course position (set Position in its register call)", l.Name))
			continue
		}
		byPos[l.Position] = append(byPos[l.Position], l.Name)
	}
	for pos, names := range byPos {
		if len(names) > 1 {
			sort.Strings(names)
			problems = append(problems, fmt.Sprintf("labs %v all claim course position %d", names, pos))
		}
	}
	sort.Strings(problems)
	return problems
}

// Every registered lab has its own place in the course, so All (and karplab lab list) has
// one order and a new lab is one register call.
func TestCoursePositions(t *testing.T) {
	if problems := positionProblems(All()); len(problems) > 0 {
		t.Errorf("course positions:\n%v", problems)
	}
	if got := All(); len(got) == 0 || got[0].Name != "happy-path" {
		t.Errorf("the course does not open with happy-path: %v", got)
	}
}

func TestPositionProblems(t *testing.T) {
	tests := []struct {
		name string
		labs []*Lab
		want []string
	}{
		{name: "distinct", labs: []*Lab{{Name: "a", Position: 1}, {Name: "b", Position: 2}}},
		{name: "none", labs: []*Lab{{Name: "a", Position: 1}, {Name: "b"}},
			want: []string{"lab b has no course position (set Position in its register call)"}},
		{name: "shared", labs: []*Lab{{Name: "b", Position: 3}, {Name: "a", Position: 3}},
			want: []string{"labs [a b] all claim course position 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, positionProblems(tt.labs)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// seedChecklist reads the course's checklist items (the "• [ ]" lines of the seed).
func seedChecklist(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../shared/seed/karpenter-node-provisioning.txt")
	if os.IsNotExist(err) {
		t.Skip("the course's shared directory is not beside this checkout")
	}
	if err != nil {
		t.Fatal(err)
	}
	var items []string
	for _, line := range strings.Split(string(b), "\n") {
		if item, ok := strings.CutPrefix(strings.TrimSpace(line), "• [ ] "); ok {
			items = append(items, item)
		}
	}
	if len(items) == 0 {
		t.Fatal("the seed has no checklist items")
	}
	return items
}

// Every checklist item a lab names is one of the course's, word for word: the lab list and
// the README's table quote them.
func TestChecklistItemsAreTheCourses(t *testing.T) {
	items := seedChecklist(t)
	for _, l := range All() {
		if len(l.Checklist) == 0 {
			t.Errorf("lab %s names no checklist item", l.Name)
		}
		for _, c := range l.Checklist {
			if !slices.Contains(items, c) {
				t.Errorf("lab %s names %q, which is not a checklist item of the course", l.Name, c)
			}
		}
	}
}

// The README's lab table has a row for every lab, and names no lab that does not exist.
func TestReadmeListsEveryLab(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| lab | what you prove (course checklist) |")
	if !ok {
		t.Fatal("README.md has no lab table")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	var rows []string
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Split(line, "|"); len(f) > 2 && !strings.HasPrefix(strings.TrimSpace(f[1]), "---") {
			rows = append(rows, strings.TrimSpace(f[1]))
		}
	}
	var names []string
	for _, l := range All() {
		names = append(names, l.Name)
	}
	if diff := cmp.Diff(names, rows); diff != "" {
		t.Errorf("README.md's lab table, in course order (-labs +table):\n%s", diff)
	}
}

// The README's checklist table has a row for each of the course's items, in the course's
// order, naming exactly the labs (in course order) whose Checklist quotes it.
func TestReadmeMapsTheChecklist(t *testing.T) {
	items := seedChecklist(t)
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| checklist item | rehearsed by |")
	if !ok {
		t.Fatal("README.md has no checklist table")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	var rows, want []string
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Split(line, "|"); len(f) > 3 && !strings.HasPrefix(strings.TrimSpace(f[1]), "---") {
			rows = append(rows, strings.TrimSpace(f[1])+" | "+strings.TrimSpace(f[2]))
		}
	}
	for _, item := range items {
		var names []string
		for _, l := range All() {
			if slices.Contains(l.Checklist, item) {
				names = append(names, l.Name)
			}
		}
		want = append(want, item+" | "+strings.Join(names, ", "))
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("README.md's checklist table (-labs +table):\n%s", diff)
	}
}

// Every item of the course's checklist is rehearsed by at least one lab.
func TestEveryChecklistItemIsRehearsed(t *testing.T) {
	for _, item := range seedChecklist(t) {
		covered := false
		for _, l := range All() {
			covered = covered || slices.Contains(l.Checklist, item)
		}
		if !covered {
			t.Errorf("no lab rehearses the course's checklist item %q", item)
		}
	}
}

// Every folder of exercises/ and solutions/ is a registered lab's, and every lab has both:
// a folder without its register call (or the reverse) would go unseen by lab list and check.
func TestEveryFolderIsALab(t *testing.T) {
	var names []string
	for _, l := range All() {
		names = append(names, l.Name)
	}
	sort.Strings(names)
	for _, tree := range []struct {
		name string
		fs   fs.FS
	}{{"exercises", exercises.FS}, {"solutions", solutions.FS}} {
		entries, err := fs.ReadDir(tree.fs, ".")
		if err != nil {
			t.Fatal(err)
		}
		var dirs []string
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, e.Name())
			}
		}
		if diff := cmp.Diff(names, dirs); diff != "" {
			t.Errorf("%s/ folders against the registered labs (-labs +folders):\n%s", tree.name, diff)
		}
	}
}

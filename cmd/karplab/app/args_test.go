package app

import (
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInterspersed(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	tests := []struct {
		name string
		args string
		want string
	}{
		{name: "bool flag after the name", args: "karplab lab run happy-path --solution", want: "karplab lab run --solution happy-path"},
		{name: "flag already first", args: "karplab lab run --solution happy-path", want: "karplab lab run --solution happy-path"},
		{name: "value flag after the name", args: "karplab check happy-path --json", want: "karplab check --json happy-path"},
		{name: "flag with separate value", args: "karplab evidence --html page.html", want: "karplab evidence --html page.html"},
		{name: "global flag kept in place", args: "karplab -v 1 check happy-path --json", want: "karplab -v 1 check --json happy-path"},
		{name: "kubectl passes through", args: "karplab kubectl get pods -n ziba", want: "karplab kubectl get pods -n ziba"},
		{name: "two positionals", args: "karplab lab get happy-path mydir", want: "karplab lab get happy-path mydir"},
		{name: "double dash ends flags", args: "karplab lab get -- --odd-dir", want: "karplab lab get -- --odd-dir"},
		{name: "unknown command untouched", args: "karplab nope --x y", want: "karplab nope --x y"},
		{name: "flag value after positional", args: "karplab ec2 audit --action CreateFleet", want: "karplab ec2 audit --action CreateFleet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(interspersed(app, strings.Fields(tt.args)), " ")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

package kubelet

import (
	"regexp"
	"strconv"
	"strings"
)

// ScriptFailure tells how a custom user-data script (an EC2NodeClass's spec.userData) would
// end as the simulated kubelet judges it at boot: the exit status and 1-based line of its first
// unconditional failure, or 0, 0. Graders use it to tell whether user data breaks bootstrap.
func ScriptFailure(script string) (status, line int) { return scriptFailure(script) }

// scriptFailure tells how a custom user-data script would end, as far as the lab can tell
// without running it (it never runs user data on the host). It looks at top-level commands
// only, outside if/for/while/case blocks, functions, subshells and heredocs, and reports the
// first unconditional `exit N` with N != 0, or a bare `false` after `set -e`. It returns the
// exit status and the 1-based line, or 0, 0 when the script would succeed.
func scriptFailure(script string) (status, line int) {
	depth := 0
	errexit := false
	heredoc := ""
	heredocTabs := false
	lines := strings.Split(strings.ReplaceAll(script, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		lineNo := i + 1
		text := lines[i]
		if heredoc != "" {
			t := text
			if heredocTabs {
				t = strings.TrimLeft(t, "\t")
			}
			if t == heredoc {
				heredoc = ""
			}
			continue
		}
		for strings.HasSuffix(text, "\\") && i+1 < len(lines) {
			i++
			text = strings.TrimSuffix(text, "\\") + " " + lines[i]
		}
		text = stripComment(text)
		if m := heredocRE.FindStringSubmatch(text); m != nil {
			heredoc, heredocTabs = m[2], m[1] == "-"
		}
		for _, seg := range splitCommands(text) {
			fields := strings.Fields(seg)
			if len(fields) == 0 {
				continue
			}
			switch first := fields[0]; {
			case blockOpen[first]:
				depth++
				continue
			case blockClose[first]:
				if depth > 0 {
					depth--
				}
				continue
			case strings.HasPrefix(first, "("):
				if !strings.Contains(seg, ")") {
					depth++
				}
				continue
			case strings.HasPrefix(first, ")"):
				if depth > 0 {
					depth--
				}
				continue
			}
			if fields[len(fields)-1] == "{" {
				depth++ // a function body or a brace group opens
				continue
			}
			if depth > 0 {
				continue
			}
			if fields[0] == "set" {
				for _, f := range fields[1:] {
					if (strings.HasPrefix(f, "-") && strings.Contains(f, "e")) || f == "errexit" {
						errexit = true
					}
				}
			}
			if errexit && len(fields) == 1 && fields[0] == "false" {
				return 1, lineNo
			}
			if fields[0] == "exit" {
				if len(fields) < 2 {
					return 0, 0 // status of the last command: the lab assumes success
				}
				n, err := strconv.Atoi(fields[1])
				if err != nil || n%256 == 0 {
					return 0, 0
				}
				return n % 256, lineNo
			}
		}
	}
	return 0, 0
}

var (
	heredocRE  = regexp.MustCompile(`<<(-?)\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)
	blockOpen  = map[string]bool{"if": true, "for": true, "while": true, "until": true, "case": true, "select": true, "function": true}
	blockClose = map[string]bool{"fi": true, "done": true, "esac": true, "}": true}
)

// splitCommands splits a line at ; (outside quotes). A command list joined by && or || is
// conditional, so it is dropped: only unconditional commands are judged.
func splitCommands(line string) []string {
	var out []string
	var cur strings.Builder
	quote := byte(0)
	flush := func() {
		s := strings.TrimSpace(cur.String())
		cur.Reset()
		if s != "" && !strings.Contains(s, "&&") && !strings.Contains(s, "||") {
			out = append(out, s)
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == ';':
			flush()
			continue
		}
		cur.WriteByte(c)
	}
	flush()
	return out
}

// stripComment drops a # comment that starts a word outside quotes.
func stripComment(line string) string {
	quote := byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return line[:i]
		}
	}
	return line
}

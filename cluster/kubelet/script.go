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
	errexit := false
	for _, c := range topLevelCommands(script) {
		if end, st := c.ends(&errexit); end {
			if st == 0 {
				return 0, 0
			}
			return st, c.line
		}
	}
	return 0, 0
}

// command is one top-level, unconditional command of a script and its 1-based line.
type command struct {
	line   int
	text   string
	fields []string
}

// ends tells whether the command ends the script, and with what status: an `exit N` (a bare
// exit, or one with a variable, is taken as success), or `false` after set -e. errexit
// carries set -e from one command to the next.
func (c command) ends(errexit *bool) (bool, int) {
	f := c.fields
	if f[0] == "set" {
		for _, o := range f[1:] {
			if (strings.HasPrefix(o, "-") && strings.Contains(o, "e")) || o == "errexit" {
				*errexit = true
			}
		}
	}
	if *errexit && len(f) == 1 && f[0] == "false" {
		return true, 1
	}
	if f[0] != "exit" {
		return false, 0
	}
	if len(f) < 2 {
		return true, 0 // status of the last command: the lab assumes success
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		return true, 0
	}
	return true, n % 256
}

// topLevelCommands lists the script's commands outside if/for/while/case blocks, functions,
// subshells and heredocs, leaving out command lists joined by && or ||.
func topLevelCommands(script string) []command {
	var out []command
	depth := 0
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
			if depth == 0 {
				out = append(out, command{line: lineNo, text: seg, fields: fields})
			}
		}
	}
	return out
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

// consoleWrite is one line a script printed: to its output, which cloud-init copies to the
// console under its own name, or straight to the console device (raw).
type consoleWrite struct {
	text string
	raw  bool
}

// scriptOutput is what a custom user-data script prints, as its run would show it on the
// console: the lines its top-level echo, printf and sysctl -w commands write to stdout, stderr
// or /dev/console, up to the command that ends it. Words are unquoted as the shell does;
// what goes to a file or /dev/null prints nothing. Commands the lab cannot evaluate without
// running them (expansions, pipelines, other programs) print nothing.
func scriptOutput(script string) []consoleWrite {
	var out []consoleWrite
	errexit := false
	for _, c := range topLevelCommands(script) {
		if end, _ := c.ends(&errexit); end {
			break
		}
		words, dest, ok := shellWords(c.text)
		if !ok || dest == destNone || len(words) == 0 {
			continue
		}
		for _, l := range printed(words) {
			out = append(out, consoleWrite{text: l, raw: dest == destConsole})
		}
	}
	return out
}

// Where a command's output goes.
const (
	destOutput  = iota // stdout or stderr: cloud-init's output, which it copies to the console
	destConsole        // the console device itself
	destNone           // a file, /dev/null
)

// shellWords splits a simple command into its words, unquoted, and where its stdout goes.
// ok is false for what only running it would tell: an expansion ($, `), a pipeline, a
// redirection it cannot follow.
func shellWords(cmd string) (words []string, dest int, ok bool) {
	var cur strings.Builder
	inWord, redirect := false, ""
	flush := func() {
		if !inWord {
			return
		}
		w := cur.String()
		cur.Reset()
		inWord = false
		if redirect != "" {
			dest = redirectDest(redirect, w, dest)
			redirect = ""
			return
		}
		words = append(words, w)
	}
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(cmd[i+1:], '\'')
			if j < 0 {
				return nil, 0, false
			}
			cur.WriteString(cmd[i+1 : i+1+j])
			inWord, i = true, i+1+j
		case c == '"':
			j := i + 1
			for ; j < len(cmd) && cmd[j] != '"'; j++ {
				switch cmd[j] {
				case '$', '`':
					return nil, 0, false
				case '\\':
					if j+1 < len(cmd) && strings.IndexByte(`"\$`+"`", cmd[j+1]) >= 0 {
						j++
					}
				}
				cur.WriteByte(cmd[j])
			}
			if j == len(cmd) {
				return nil, 0, false
			}
			inWord, i = true, j
		case c == '\\' && i+1 < len(cmd):
			i++
			cur.WriteByte(cmd[i])
			inWord = true
		case c == '$' || c == '`' || c == '|' || c == '&' || c == '<':
			return nil, 0, false
		case c == ' ' || c == '\t':
			flush()
		case c == '>':
			// [n]>file, [n]>>file, >&2, 2>&1: the fd is the digits just before.
			fd := "1"
			if inWord && isDigits(cur.String()) {
				fd = cur.String()
				cur.Reset()
				inWord = false
			}
			flush()
			op := ">"
			if i+1 < len(cmd) && cmd[i+1] == '>' {
				op, i = ">>", i+1
			}
			if i+1 < len(cmd) && cmd[i+1] == '&' {
				j := i + 2
				for j < len(cmd) && cmd[j] >= '0' && cmd[j] <= '9' {
					j++
				}
				if fd == "1" && cmd[i+2:j] != "1" && cmd[i+2:j] != "2" {
					return nil, 0, false
				}
				i = j - 1
				continue // to stdout or stderr: cloud-init's output either way
			}
			if fd == "1" {
				redirect = op
			} else {
				redirect = "ignore"
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	if redirect != "" {
		return nil, 0, false
	}
	return words, dest, true
}

func redirectDest(op, target string, dest int) int {
	switch {
	case op == "ignore":
		return dest // another fd than stdout
	case target == "/dev/console" || target == "/dev/ttyS0":
		return destConsole
	case target == "/dev/stdout" || target == "/dev/stderr":
		return destOutput
	}
	return destNone
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// printed is what echo, printf or sysctl -w print; other commands print nothing the lab knows.
func printed(words []string) []string {
	var text string
	switch args := words[1:]; words[0] {
	case "echo":
		escapes := false
		for len(args) > 0 && (args[0] == "-n" || args[0] == "-e" || args[0] == "-E" || args[0] == "-ne" || args[0] == "-en") {
			escapes = escapes || strings.Contains(args[0], "e")
			args = args[1:]
		}
		text = strings.Join(args, " ")
		if escapes {
			text = unescape(text)
		}
	case "printf":
		if len(args) == 0 {
			return nil
		}
		format, vals := unescape(args[0]), args[1:]
		var b strings.Builder
		for i := 0; i < len(format); i++ {
			if format[i] != '%' || i+1 == len(format) {
				b.WriteByte(format[i])
				continue
			}
			i++
			switch format[i] {
			case '%':
				b.WriteByte('%')
			case 's', 'd':
				if len(vals) > 0 {
					b.WriteString(vals[0])
					vals = vals[1:]
				}
			default:
				return nil // a format the lab does not follow
			}
		}
		text = b.String()
	case "sysctl":
		for _, a := range args {
			if k, v, ok := strings.Cut(a, "="); ok && !strings.HasPrefix(a, "-") {
				text += k + " = " + v + "\n"
			} else if a == "-q" {
				return nil
			}
		}
	default:
		return nil
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// unescape reads the backslash escapes echo -e and printf's format know.
func unescape(s string) string {
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`).Replace(s)
}

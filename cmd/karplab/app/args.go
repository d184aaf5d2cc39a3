package app

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed moves a leaf command's flags ahead of its positional arguments, so that
// `karplab lab run happy-path --solution` means what it says: urfave/cli stops reading
// flags at the first positional argument and would otherwise take --solution as a name.
// Commands that pass their arguments through (kubectl) are left alone, as is everything
// after "--".
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	commands := app.Commands
	flags := app.Flags
	var leaf *cli.Command
	// Walk global flags and subcommand names down to the leaf command.
	for len(rest) > 0 {
		tok := rest[0]
		if strings.HasPrefix(tok, "-") {
			n := flagTokens(flags, tok, rest)
			out = append(out, rest[:n]...)
			rest = rest[n:]
			continue
		}
		cmd := findCommand(commands, tok)
		if cmd == nil {
			break
		}
		out = append(out, tok)
		rest = rest[1:]
		leaf, commands, flags = cmd, cmd.Subcommands, cmd.Flags
		if cmd.SkipFlagParsing || len(cmd.Subcommands) == 0 {
			break
		}
	}
	if leaf == nil || leaf.SkipFlagParsing || len(leaf.Subcommands) > 0 {
		return append(out, rest...)
	}
	var flagArgs, positional []string
	for len(rest) > 0 {
		tok := rest[0]
		switch {
		case tok == "--":
			positional = append(positional, rest...)
			rest = nil
		case strings.HasPrefix(tok, "-") && tok != "-":
			n := flagTokens(flags, tok, rest)
			flagArgs = append(flagArgs, rest[:n]...)
			rest = rest[n:]
		default:
			positional = append(positional, tok)
			rest = rest[1:]
		}
	}
	out = append(out, flagArgs...)
	return append(out, positional...)
}

// flagTokens is how many tokens the flag at rest[0] spans: 2 when it takes a value given
// separately ("--html FILE"), else 1 ("--json", "--html=FILE", or an unknown flag, which
// urfave/cli then reports).
func flagTokens(flags []cli.Flag, tok string, rest []string) int {
	name := strings.TrimLeft(tok, "-")
	if strings.Contains(name, "=") {
		return 1
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			if _, isBool := f.(*cli.BoolFlag); isBool || len(rest) < 2 {
				return 1
			}
			return 2
		}
	}
	return 1
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

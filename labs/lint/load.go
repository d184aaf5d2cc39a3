package lint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// ReadFiles reads the NodePools in YAML files (multi-document). Documents that are not
// NodePools come back as notes. Every problem found is returned, each naming its file and
// line, so one run shows them all.
func ReadFiles(paths []string) ([]Pool, []string, error) {
	var pools []Pool
	var notes []string
	var errs []error
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading NodePools: %w", err))
			continue
		}
		p, n, err := Parse(path, data)
		pools, notes = append(pools, p...), append(notes, n...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := duplicates(pools); err != nil {
		errs = append(errs, err)
	}
	return pools, notes, errors.Join(errs...)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Parse reads the NodePools in one YAML stream; name is what errors and sources call it.
func Parse(name string, data []byte) ([]Pool, []string, error) {
	var pools []Pool
	var notes []string
	var errs []error
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for n := 1; ; n++ {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err == io.EOF {
			break
		}
		if err != nil {
			// The parser cannot resume after a syntax error: stop this file.
			if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
				ctx, _ := strconv.Atoi(m[1])
				line, msg := problemLine(data, ctx), m[2]
				if line != ctx {
					msg += fmt.Sprintf(" (in the block that starts at line %d)", ctx)
				}
				errs = append(errs, fmt.Errorf("%s:%d: malformed YAML: %s", name, line, msg))
			} else {
				errs = append(errs, fmt.Errorf("%s: malformed YAML in document %d: %w", name, n, err))
			}
			break
		}
		if len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" {
			continue // an empty document, as after a trailing "---"
		}
		p, note, err := parseDocument(name, doc.Content[0])
		switch {
		case err != nil:
			errs = append(errs, err)
		case note != "":
			notes = append(notes, note)
		default:
			pools = append(pools, p)
		}
	}
	return pools, notes, errors.Join(errs...)
}

func parseDocument(name string, root *yaml.Node) (Pool, string, error) {
	at := fmt.Sprintf("%s:%d", name, root.Line)
	if root.Kind != yaml.MappingNode {
		return Pool{}, "", fmt.Errorf("%s: document is not a Kubernetes object (a mapping with apiVersion and kind)", at)
	}
	var obj map[string]any
	if err := root.Decode(&obj); err != nil {
		return Pool{}, "", decodeError(name, at, err)
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	objName, _ := meta["name"].(string)
	if kind == "" || apiVersion == "" {
		return Pool{}, fmt.Sprintf("%s: a document without apiVersion and kind is not a NodePool; ignored", at), nil
	}
	if kind != "NodePool" || !strings.HasPrefix(apiVersion, "karpenter.sh/") {
		return Pool{}, fmt.Sprintf("%s: %s %s %q is not a NodePool; ignored", at, apiVersion, kind, objName), nil
	}
	if apiVersion != "karpenter.sh/v1" {
		return Pool{}, "", fmt.Errorf("%s: NodePool %q: apiVersion %s is not served by Karpenter v1.15; convert it to karpenter.sh/v1", at, objName, apiVersion)
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return Pool{}, "", fmt.Errorf("%s: NodePool %q: %w", at, objName, err)
	}
	np := &karpv1.NodePool{}
	strict, err := kjson.UnmarshalStrict(data, np)
	if err != nil {
		if m := jsonTypeError.FindStringSubmatch(err.Error()); m != nil {
			return Pool{}, "", fmt.Errorf("%s:%d: NodePool %q: %s: a %s where %s is wanted; fix the value (quote numbers that are strings, unquote counts)",
				name, lineOf(root, m[3]), objName, m[3], m[1], m[4])
		}
		return Pool{}, "", fmt.Errorf("%s: NodePool %q: %w", at, objName, err)
	}
	var errs []error
	for _, e := range strict {
		path := strings.TrimSuffix(strings.TrimPrefix(e.Error(), `unknown field "`), `"`)
		errs = append(errs, fmt.Errorf("%s:%d: NodePool %q: unknown field %s: fix its spelling or remove it (kubectl explain nodepool.spec lists the fields)",
			name, lineOf(root, path), objName, path))
	}
	for _, fe := range validate(np) {
		errs = append(errs, fmt.Errorf("%s:%d: NodePool %q: %s: %s", name, lineOf(root, fe.path), objName, fe.path, fe.msg))
	}
	if len(errs) > 0 {
		return Pool{}, "", errors.Join(errs...)
	}
	return Pool{NodePool: np, Source: at}, "", nil
}

// problemLine finds the line a syntax error is on: the parser reports where the enclosing
// block starts, so this looks for the first line from there whose prefix fails to parse.
func problemLine(data []byte, from int) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	for k := from; k <= len(lines); k++ {
		dec := yaml.NewDecoder(bytes.NewReader(bytes.Join(lines[:k], nil)))
		for {
			var n yaml.Node
			err := dec.Decode(&n)
			if err == io.EOF {
				break
			}
			if err != nil {
				return k
			}
		}
	}
	return from
}

var jsonTypeError = regexp.MustCompile(`cannot unmarshal (\w+) into Go (struct field|value) \w*\.?(\S+) of type (\S+)`)

var typeErrorLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// decodeError puts yaml's "line N: ..." errors (duplicate keys) on the file's line.
func decodeError(name, at string, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("%s: %w", at, err)
	}
	var errs []error
	for _, e := range te.Errors {
		if m := typeErrorLine.FindStringSubmatch(e); m != nil {
			errs = append(errs, fmt.Errorf("%s:%s: malformed YAML: %s", name, m[1], m[2]))
		} else {
			errs = append(errs, fmt.Errorf("%s: malformed YAML: %s", at, e))
		}
	}
	return errors.Join(errs...)
}

type fieldError struct{ path, msg string }

// validate checks what the CRD's schema would reject and the analysis relies on: core
// parses Gt/Lt values without checking them ("prevalidated").
func validate(np *karpv1.NodePool) []fieldError {
	var errs []fieldError
	if np.Name == "" {
		errs = append(errs, fieldError{"metadata.name", "is empty; give the NodePool a name"})
	}
	for i, r := range np.Spec.Template.Spec.Requirements {
		path := fmt.Sprintf("spec.template.spec.requirements[%d]", i)
		if r.Key == "" {
			errs = append(errs, fieldError{path + ".key", "is empty; name a node label such as kubernetes.io/arch"})
		}
		switch r.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(r.Values) == 0 {
				errs = append(errs, fieldError{path + ".values", fmt.Sprintf("is empty; %s needs at least one value", r.Operator)})
			}
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				errs = append(errs, fieldError{path + ".values", fmt.Sprintf("must be empty for %s; remove them or use In", r.Operator)})
			}
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt, karpv1.NodeSelectorOpGte, karpv1.NodeSelectorOpLte:
			if len(r.Values) != 1 {
				errs = append(errs, fieldError{path + ".values", fmt.Sprintf("has %d values; %s takes exactly one integer", len(r.Values), r.Operator)})
			} else if _, err := strconv.Atoi(r.Values[0]); err != nil {
				errs = append(errs, fieldError{path + ".values[0]", fmt.Sprintf("%q is not an integer; %s compares numbers", r.Values[0], r.Operator)})
			}
		default:
			errs = append(errs, fieldError{path + ".operator", fmt.Sprintf("%q is not an operator; use one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte", r.Operator)})
		}
	}
	return errs
}

func duplicates(pools []Pool) error {
	seen := map[string]string{}
	var errs []error
	for _, p := range pools {
		if prev, ok := seen[p.NodePool.Name]; ok {
			errs = append(errs, fmt.Errorf("%s: NodePool %q is also defined at %s; NodePools are cluster-scoped, so one would replace the other: rename one",
				p.Source, p.NodePool.Name, prev))
			continue
		}
		seen[p.NodePool.Name] = p.Source
	}
	return errors.Join(errs...)
}

var pathIndex = regexp.MustCompile(`\[(\d+)\]`)

// lineOf finds the line of a field path such as spec.template.spec.requirements[2].operator,
// or of its deepest existing ancestor.
func lineOf(root *yaml.Node, path string) int {
	node, line := root, root.Line
	for _, seg := range strings.Split(path, ".") {
		key := seg
		if i := strings.Index(seg, "["); i >= 0 {
			key = seg[:i]
		}
		next := (*yaml.Node)(nil)
		if node.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(node.Content); i += 2 {
				if node.Content[i].Value == key {
					line, next = node.Content[i].Line, node.Content[i+1]
					break
				}
			}
		}
		if next == nil {
			return line
		}
		node = next
		for _, m := range pathIndex.FindAllStringSubmatch(seg, -1) {
			idx, _ := strconv.Atoi(m[1])
			if node.Kind != yaml.SequenceNode || idx >= len(node.Content) {
				return line
			}
			node = node.Content[idx]
			line = node.Line
		}
	}
	return line
}

package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// karpenterType is one type of ../shared/data/aws-instance-types.json: the labels and
// resources Karpenter derives from DescribeInstanceTypes.
type karpenterType struct {
	Labels    map[string]string `json:"labels"`
	Resources map[string]string `json:"resources"`
}

func readKarpenterTypes(path string) (source string, types map[string]karpenterType, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	var doc struct {
		Source string                   `json:"source"`
		Types  map[string]karpenterType `json:"types"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc.Source, doc.Types, nil
}

// vpcLimits is one entry of karpenter-provider-aws's zz_generated.vpclimits.go.
type vpcLimits struct {
	Interface, IPv4PerInterface int64
	Cards                       []int64 // MaximumNetworkInterfaces by NetworkCardIndex
	DefaultCard                 int64
	Hypervisor                  string
	BareMetal                   bool
}

// karpenterData is what the generator reads of karpenter-provider-aws's generated files.
type karpenterData struct {
	dir       string
	limits    map[string]vpcLimits
	bandwidth map[string]int64
	usEast1   map[string]float64
	stamp     string // the pricing file's "generated at" line
}

func moduleDir(mod string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod).Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %w", mod, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func readKarpenterData(dir string) (*karpenterData, error) {
	k := &karpenterData{dir: dir}
	lim, err := parseVar(filepath.Join(dir, "pkg/providers/instancetype/zz_generated.vpclimits.go"), "Limits")
	if err != nil {
		return nil, err
	}
	k.limits = map[string]vpcLimits{}
	for name, v := range lim.(map[string]any) {
		m := v.(map[string]any)
		l := vpcLimits{Interface: m["Interface"].(int64), IPv4PerInterface: m["IPv4PerInterface"].(int64),
			DefaultCard: m["DefaultNetworkCardIndex"].(int64), Hypervisor: m["Hypervisor"].(string), BareMetal: m["IsBareMetal"].(bool)}
		for _, c := range m["NetworkCards"].([]any) {
			card := c.(map[string]any)
			idx := card["NetworkCardIndex"].(int64)
			for int64(len(l.Cards)) <= idx {
				l.Cards = append(l.Cards, 0)
			}
			l.Cards[idx] = card["MaximumNetworkInterfaces"].(int64)
		}
		k.limits[name] = l
	}
	bw, err := parseVar(filepath.Join(dir, "pkg/providers/instancetype/zz_generated.bandwidth.go"), "InstanceTypeBandwidthMegabits")
	if err != nil {
		return nil, err
	}
	k.bandwidth = map[string]int64{}
	for name, v := range bw.(map[string]any) {
		k.bandwidth[name] = v.(int64)
	}
	pricingFile := filepath.Join(dir, "pkg/providers/pricing/zz_generated.pricing_aws.go")
	pr, err := parseVar(pricingFile, "InitialOnDemandPricesAWS")
	if err != nil {
		return nil, err
	}
	k.usEast1 = map[string]float64{}
	for name, v := range pr.(map[string]any)["us-east-1"].(map[string]any) {
		k.usEast1[name] = toFloat(v)
	}
	src, _ := os.ReadFile(pricingFile)
	if m := regexp.MustCompile(`// generated at (\S+) for us-east-1`).FindSubmatch(src); m != nil {
		k.stamp = string(m[1])
	}
	return k, nil
}

func toFloat(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int64:
		return float64(n)
	}
	panic(fmt.Sprintf("not a number: %v", v))
}

// parseVar reads the package-level variable name of a Go file as data: composite
// literals become maps (keyed) or slices (unkeyed), literals their values. Nothing of
// the file is compiled or copied.
func parseVar(path, name string) (any, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if n.Name == name && i < len(vs.Values) {
					return literal(vs.Values[i])
				}
			}
		}
	}
	return nil, fmt.Errorf("%s: no variable %s", path, name)
}

func literal(e ast.Expr) (any, error) {
	switch e := e.(type) {
	case *ast.UnaryExpr:
		return literal(e.X)
	case *ast.BasicLit:
		switch e.Kind {
		case token.INT:
			return strconv.ParseInt(e.Value, 10, 64)
		case token.FLOAT:
			return strconv.ParseFloat(e.Value, 64)
		case token.STRING:
			return strconv.Unquote(e.Value)
		}
	case *ast.Ident:
		switch e.Name {
		case "true", "false":
			return e.Name == "true", nil
		}
	case *ast.CompositeLit:
		return composite(e)
	}
	return nil, fmt.Errorf("unexpected expression %T at %v", e, e.Pos())
}

func composite(e *ast.CompositeLit) (any, error) {
	if len(e.Elts) > 0 {
		if _, keyed := e.Elts[0].(*ast.KeyValueExpr); !keyed {
			var out []any
			for _, el := range e.Elts {
				v, err := literal(el)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			return out, nil
		}
	}
	out := map[string]any{}
	for _, el := range e.Elts {
		kv := el.(*ast.KeyValueExpr)
		var key string
		switch k := kv.Key.(type) {
		case *ast.Ident:
			key = k.Name
		case *ast.BasicLit:
			key, _ = strconv.Unquote(k.Value)
		default:
			return nil, fmt.Errorf("unexpected key %T", k)
		}
		v, err := literal(kv.Value)
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, nil
}

// libcloudData is Apache Libcloud's dump of AWS's Price List: regional Linux on-demand
// prices (data/pricing.json, "ec2_linux") and each type's Price List attributes
// (compute/constants/ec2_instance_types.py).
type libcloudData struct {
	updated int64
	prices  map[string]map[string]float64 // type -> region -> USD/h (0 dropped)
	attrs   map[string]map[string]string  // type -> Price List attribute -> value
}

func readLibcloud(dir string) (*libcloudData, error) {
	b, err := os.ReadFile(filepath.Join(dir, "data/pricing.json"))
	if err != nil {
		return nil, err
	}
	var doc struct {
		Updated int64 `json:"updated"`
		Compute struct {
			Linux map[string]map[string]float64 `json:"ec2_linux"`
		} `json:"compute"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("libcloud pricing.json: %w", err)
	}
	l := &libcloudData{updated: doc.Updated, prices: map[string]map[string]float64{}}
	for t, regions := range doc.Compute.Linux {
		if !strings.Contains(t, ".") {
			continue // a family's summary row
		}
		for r, usd := range regions {
			if usd > 0 {
				if l.prices[t] == nil {
					l.prices[t] = map[string]float64{}
				}
				l.prices[t][r] = usd
			}
		}
	}
	py, err := os.ReadFile(filepath.Join(dir, "compute/constants/ec2_instance_types.py"))
	if err != nil {
		return nil, err
	}
	i := bytes.Index(py, []byte("INSTANCE_TYPES = "))
	if i < 0 {
		return nil, fmt.Errorf("ec2_instance_types.py: no INSTANCE_TYPES")
	}
	// A Python dict literal of strings, numbers and None: JSON once None and the
	// trailing commas go.
	js := regexp.MustCompile(`,(\s*[}\]])`).ReplaceAll(py[i+len("INSTANCE_TYPES = "):], []byte("$1"))
	js = bytes.ReplaceAll(js, []byte(": None"), []byte(": null"))
	var sizes map[string]struct {
		Extra map[string]any `json:"extra"`
	}
	if err := json.Unmarshal(js, &sizes); err != nil {
		return nil, fmt.Errorf("ec2_instance_types.py: %w", err)
	}
	l.attrs = map[string]map[string]string{}
	for t, s := range sizes {
		m := map[string]string{}
		for k, v := range s.Extra {
			if str, ok := v.(string); ok {
				m[k] = str
			}
		}
		l.attrs[t] = m
	}
	return l, nil
}

// earlierRow is a row of eu-west-2.csv: the lab's earlier hand-checked eu-west-2 catalog.
type earlierRow struct {
	usd                float64
	derived            bool
	networkPerformance string
}

func readEarlier(path string) (map[string]earlierRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]earlierRow{}
	for _, rec := range recs {
		usd, err := strconv.ParseFloat(rec[1], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, rec[0], err)
		}
		out[rec[0]] = earlierRow{usd: usd, derived: rec[2] == "true", networkPerformance: rec[3]}
	}
	return out, nil
}

package ssm

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
)

const (
	bucketParams = "ssm-parameters"
	// maxVersions is how many versions AWS keeps of one parameter.
	maxVersions = 100
	// maxLabels is how many labels one version may carry.
	maxLabels    = 10
	defaultKeyID = "alias/aws/ssm"
)

// Parameter types and tiers as AWS spells them.
const (
	TypeString       = "String"
	TypeStringList   = "StringList"
	TypeSecureString = "SecureString"

	TierStandard     = "Standard"
	TierAdvanced     = "Advanced"
	TierIntelligent  = "Intelligent-Tiering"
	DataTypeText     = "text"
	DataTypeEC2Image = "aws:ec2:image"
)

// nameMessage is AWS's wording for every malformed parameter name.
const nameMessage = `Parameter name: can't be prefixed with "ssm" (case-insensitive). If formed as a path, it can consist of sub-paths divided by slash symbol; each sub-path can be formed as a mix of letters, numbers and the following 3 symbols .-_`

// pathMessage is AWS's wording for a malformed GetParametersByPath path.
const pathMessage = `The parameter doesn't meet the parameter name requirements. The parameter name must begin with a forward slash "/". It can't be prefixed with "aws" or "ssm" (case-insensitive). It must use only letters, numbers, or the following symbols: . (period), - (hyphen), _ (underscore). Special characters are not allowed. All sub-paths, if specified, must use the forward slash symbol "/". Valid example: /get/parameters2-/by1./path0_.`

var (
	nameChars  = regexp.MustCompile(`^[a-zA-Z0-9_.\-/]+$`)
	labelChars = regexp.MustCompile(`^[a-zA-Z0-9_.\-]+$`)
	amiID      = regexp.MustCompile(`^ami-([0-9a-f]{8}|[0-9a-f]{17})$`)
)

// Tag is a parameter's tag.
type Tag struct{ Key, Value string }

// version is one durable version of a parameter.
type version struct {
	Version          int64
	Type             string
	Value            string
	DataType         string
	Description      string   `json:",omitempty"`
	KeyID            string   `json:",omitempty"`
	Tier             string   `json:",omitempty"`
	AllowedPattern   string   `json:",omitempty"`
	Labels           []string `json:",omitempty"`
	LastModifiedDate time.Time
	LastModifiedUser string `json:",omitempty"`
}

// param is one parameter and its history, oldest version first.
type param struct {
	Name     string
	Tags     []Tag `json:",omitempty"`
	Versions []*version
	public   bool
}

func (p *param) current() *version { return p.Versions[len(p.Versions)-1] }

func (p *param) byVersion(n int64) *version {
	for _, v := range p.Versions {
		if v.Version == n {
			return v
		}
	}
	return nil
}

func (p *param) byLabel(label string) *version {
	for _, v := range p.Versions {
		for _, l := range v.Labels {
			if l == label {
				return v
			}
		}
	}
	return nil
}

// model is the account's parameters plus the public ones AWS owns.
type model struct {
	region, account string
	params          map[string]*param // the account's, by name
	public          map[string]*param // under /aws/, by name; not durable
}

func newModel(region, account string) *model {
	return &model{region: region, account: account, params: map[string]*param{}, public: map[string]*param{}}
}

// arn is the parameter's ARN; AWS's public parameters carry no account.
func (m *model) arn(p *param) string {
	acct := m.account
	if p.public {
		acct = ""
	}
	return m.arnFor(p.Name, acct)
}

func (m *model) arnFor(name, acct string) string {
	return fmt.Sprintf("arn:aws:ssm:%s:%s:parameter/%s", m.region, acct, strings.TrimPrefix(name, "/"))
}

// nameARN is the ARN policy checks a name against, whether or not it exists: the
// public tree's carries no account.
func (m *model) nameARN(name string) string {
	if isPublicName(name) {
		return m.arnFor(name, "")
	}
	return m.arnFor(name, m.account)
}

func (m *model) find(name string) *param {
	if p, ok := m.params[name]; ok {
		return p
	}
	return m.public[name]
}

func (m *model) op(p *param) account.Op {
	return account.Op{Bucket: bucketParams, Key: p.Name, Value: p}
}

// isPublicName reports a name under AWS's own /aws/ tree.
func isPublicName(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), "/aws/")
}

// reserved rejects a name the account may not write: AWS owns every name that starts
// with "aws" or "ssm" (case-insensitive, slash or not, no segment boundary needed).
func reserved(name string) *account.Error {
	bare := strings.ToLower(strings.TrimPrefix(name, "/"))
	switch {
	case strings.HasPrefix(bare, "aws"):
		return account.BadRequest("AccessDeniedException", "No access to reserved parameter name: %s.", strings.TrimPrefix(name, "/"))
	case strings.HasPrefix(bare, "ssm"):
		return account.BadRequest("ValidationException", "%s", nameMessage)
	}
	return nil
}

func validName(name string) *account.Error {
	if name == "" || len(name) > 2048 {
		return account.BadRequest("ValidationException",
			"1 validation error detected: Value '%s' at 'name' failed to satisfy constraint: Member must have length between 1 and 2048", name)
	}
	if !nameChars.MatchString(name) || (strings.Contains(name, "/") && !strings.HasPrefix(name, "/")) ||
		strings.Contains(name, "//") || strings.HasSuffix(name, "/") {
		return account.BadRequest("ValidationException", "%s", nameMessage)
	}
	if strings.Count(name, "/") > 15 {
		return account.BadRequest("HierarchyLevelLimitExceededException",
			"Parameter path: %s has more than the maximum number of hierarchy levels allowed (15)", name)
	}
	return nil
}

// ref is a parsed parameter reference: a name or ARN, optionally with ":version" or
// ":label".
type ref struct {
	name, selector, label string
	version               int64
}

func parseRef(raw string) (ref, *account.Error) {
	s := strings.TrimSpace(raw)
	if strings.HasPrefix(s, "arn:") {
		parts := strings.SplitN(s, ":", 6)
		res, ok := strings.CutPrefix(parts[len(parts)-1], "parameter/")
		if len(parts) != 6 || !ok {
			return ref{}, account.BadRequest("ValidationException", "%s", nameMessage)
		}
		if strings.Contains(strings.SplitN(res, ":", 2)[0], "/") {
			res = "/" + res
		}
		s = res
	}
	r := ref{name: s}
	if i := strings.LastIndex(s, ":"); i >= 0 {
		r.name, r.selector = s[:i], s[i:]
		sel := s[i+1:]
		if n, err := strconv.ParseInt(sel, 10, 64); err == nil && n > 0 {
			r.version = n
		} else if sel == "" || !labelChars.MatchString(sel) {
			return ref{}, account.BadRequest("ValidationException", "%s", nameMessage)
		} else {
			r.label = sel
		}
	}
	return r, validName(r.name)
}

// resolve finds the version a reference names.
func (m *model) resolve(r ref) (*param, *version, *account.Error) {
	p := m.find(r.name)
	if p == nil {
		return nil, nil, account.BadRequest("ParameterNotFound", "")
	}
	switch {
	case r.version > 0:
		if v := p.byVersion(r.version); v != nil {
			return p, v, nil
		}
		return nil, nil, account.BadRequest("ParameterVersionNotFound",
			"Systems Manager could not find version %d of %s. Verify the version and try again.", r.version, r.name)
	case r.label != "":
		if v := p.byLabel(r.label); v != nil {
			return p, v, nil
		}
		return nil, nil, account.BadRequest("ParameterNotFound", "")
	}
	return p, p.current(), nil
}

// putInput is a PutParameter request in model terms.
type putInput struct {
	Name, Value, Type, DataType, Description, KeyID, Tier, AllowedPattern string
	Overwrite                                                             bool
	Tags                                                                  []Tag
}

// put creates a parameter or a new version of one.
func (m *model) put(in putInput, now time.Time, user string) (*param, *version, bool, *account.Error) {
	if e := reserved(in.Name); e != nil {
		return nil, nil, false, e
	}
	if e := validName(in.Name); e != nil {
		return nil, nil, false, e
	}
	old := m.params[in.Name]
	if old != nil && !in.Overwrite {
		return nil, nil, false, account.BadRequest("ParameterAlreadyExists",
			"The parameter already exists. To overwrite this value, set the overwrite option in the request to true.")
	}
	if in.Overwrite && len(in.Tags) > 0 {
		return nil, nil, false, account.BadRequest("ValidationException",
			"Invalid request: tags and overwrite can't be used together. To create a parameter with tags, please remove overwrite flag. To update tags for an existing parameter, please use AddTagsToResource or RemoveTagsFromResource.")
	}
	v, e := newVersion(in, old)
	if e != nil {
		return nil, nil, false, e
	}
	v.LastModifiedDate, v.LastModifiedUser = now, user
	if old == nil {
		v.Version = 1
		p := &param{Name: in.Name, Tags: append([]Tag(nil), in.Tags...), Versions: []*version{v}}
		m.params[in.Name] = p
		return p, v, true, nil
	}
	if len(old.Versions) >= maxVersions {
		if oldest := old.Versions[0]; len(oldest.Labels) > 0 {
			return nil, nil, false, account.BadRequest("ParameterMaxVersionLimitExceeded",
				"You attempted to create a new version of %s by calling the PutParameter API with the overwrite flag. Version %d, the oldest version, can't be deleted because it has a label associated with it. Move the label to another version of the parameter, and try again.",
				in.Name, oldest.Version)
		}
		old.Versions = old.Versions[1:]
	}
	v.Version = old.current().Version + 1
	old.Versions = append(old.Versions, v)
	return old, v, false, nil
}

// newVersion validates a put and builds its version; what an overwrite omits it keeps.
func newVersion(in putInput, old *param) (*version, *account.Error) {
	v := &version{Type: in.Type, Value: in.Value, DataType: in.DataType, Description: in.Description,
		KeyID: in.KeyID, Tier: in.Tier, AllowedPattern: in.AllowedPattern}
	if old != nil {
		cur := old.current()
		v.Type = or(v.Type, cur.Type)
		v.DataType = or(v.DataType, cur.DataType)
		v.Description = or(v.Description, cur.Description)
		v.AllowedPattern = or(v.AllowedPattern, cur.AllowedPattern)
		v.Tier = or(v.Tier, cur.Tier)
		if v.Type == TypeSecureString && cur.Type == TypeSecureString {
			v.KeyID = or(v.KeyID, cur.KeyID)
		}
	}
	switch v.Type {
	case "":
		return nil, account.BadRequest("ValidationException", "A parameter type is required when you create a parameter.")
	case TypeString, TypeStringList, TypeSecureString:
	default:
		return nil, account.BadRequest("ValidationException",
			"1 validation error detected: Value '%s' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [SecureString, StringList, String]", v.Type)
	}
	if v.Value == "" {
		return nil, account.BadRequest("ValidationException",
			"1 validation error detected: Value at 'value' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	if v.KeyID != "" && v.Type != TypeSecureString {
		return nil, account.BadRequest("ValidationException", "KeyId is required for SecureString type parameter only.")
	}
	if v.Type == TypeSecureString && v.KeyID == "" {
		v.KeyID = defaultKeyID
	}
	if e := checkDataType(v); e != nil {
		return nil, e
	}
	if e := checkTier(v, old); e != nil {
		return nil, e
	}
	if v.AllowedPattern != "" {
		re, err := regexp.Compile("^(?:" + v.AllowedPattern + ")$")
		if err != nil {
			return nil, account.BadRequest("ValidationException", "Parameter allowedPattern is not a valid regular expression: %s", v.AllowedPattern)
		}
		if !re.MatchString(v.Value) {
			return nil, account.BadRequest("ParameterPatternMismatchException",
				"Parameter value, cannot be validated against allowedPattern: %s", v.AllowedPattern)
		}
	}
	return v, nil
}

func checkDataType(v *version) *account.Error {
	switch v.DataType {
	case "":
		v.DataType = DataTypeText
	case DataTypeText, "aws:ssm:integration":
	case DataTypeEC2Image:
		if v.Type != TypeString {
			return account.BadRequest("ValidationException", "Parameter type must be String for data type %s.", v.DataType)
		}
		// AWS checks the AMI asynchronously and drops a bad one; the lab refuses it outright.
		if !amiID.MatchString(v.Value) {
			return account.BadRequest("ValidationException", "Invalid formatted AMI ID: %s", v.Value)
		}
	default:
		return account.BadRequest("ValidationException", "The following data type is not supported: %s (Data type names are all lowercase.)", v.DataType)
	}
	return nil
}

func checkTier(v *version, old *param) *account.Error {
	switch v.Tier {
	case "", TierStandard:
		if old != nil && old.current().Tier == TierAdvanced && v.Tier == TierStandard {
			return account.BadRequest("ValidationException",
				"This parameter uses the advanced-parameter tier. You can't downgrade a parameter from the advanced-parameter tier to the standard-parameter tier. If necessary, you can delete the advanced parameter and recreate it as a standard parameter.")
		}
		if v.Tier == "" && old != nil {
			v.Tier = old.current().Tier
		}
		if v.Tier == "" {
			v.Tier = TierStandard
		}
	case TierIntelligent:
		v.Tier = TierStandard
		if len(v.Value) > 4096 {
			v.Tier = TierAdvanced
		}
	case TierAdvanced:
	default:
		return account.BadRequest("ValidationException",
			"1 validation error detected: Value '%s' at 'tier' failed to satisfy constraint: Member must satisfy enum value set: [Advanced, Intelligent-Tiering, Standard]", v.Tier)
	}
	limit := map[string]int{TierStandard: 4096, TierAdvanced: 8192}[v.Tier]
	if len(v.Value) > limit {
		if v.Tier == TierStandard {
			return account.BadRequest("ValidationException",
				"Standard tier parameters support a maximum parameter value of 4096 characters. To create a larger parameter value, upgrade the parameter to use the advanced-parameter tier. For more information, see https://docs.aws.amazon.com/systems-manager/latest/userguide/parameter-store-advanced-parameters.html")
		}
		return account.BadRequest("ValidationException", "Advanced tier parameters support a maximum parameter value of 8192 characters.")
	}
	return nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// remove deletes one of the account's parameters.
func (m *model) remove(name string) (*param, *account.Error) {
	if e := reserved(name); e != nil {
		return nil, e
	}
	if e := validName(name); e != nil {
		return nil, e
	}
	p, ok := m.params[name]
	if !ok {
		return nil, account.BadRequest("ParameterNotFound", "")
	}
	delete(m.params, name)
	return p, nil
}

// label attaches labels to one version, moving any that another version carries.
// Labels AWS would refuse come back as invalid and are not attached.
func (m *model) label(name string, n int64, labels []string) (*param, int64, []string, *account.Error) {
	if e := validName(name); e != nil {
		return nil, 0, nil, e
	}
	p := m.params[name]
	if p == nil {
		return nil, 0, nil, account.BadRequest("ParameterNotFound", "")
	}
	v := p.current()
	if n > 0 {
		if v = p.byVersion(n); v == nil {
			return nil, 0, nil, account.BadRequest("ParameterVersionNotFound",
				"Systems Manager could not find version %d of %s. Verify the version and try again.", n, name)
		}
	}
	var good, bad []string
	for _, l := range labels {
		if validLabel(l) {
			good = append(good, l)
		} else {
			bad = append(bad, l)
		}
	}
	merged := append([]string(nil), v.Labels...)
	for _, l := range good {
		if !contains(merged, l) {
			merged = append(merged, l)
		}
	}
	if len(merged) > maxLabels {
		return nil, 0, nil, account.BadRequest("ParameterVersionLabelLimitExceeded",
			"A parameter version can have maximum 10 labels.Move one or more labels to another version and try again.")
	}
	for _, o := range p.Versions {
		if o != v {
			o.Labels = without(o.Labels, good)
		}
	}
	v.Labels = merged
	return p, v.Version, bad, nil
}

// validLabel applies AWS's label rules: letters, digits, ._- , at most 100 characters,
// not starting with a digit, "aws" or "ssm".
func validLabel(l string) bool {
	low := strings.ToLower(l)
	return len(l) <= 100 && labelChars.MatchString(l) && (l[0] < '0' || l[0] > '9') &&
		!strings.HasPrefix(low, "aws") && !strings.HasPrefix(low, "ssm")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func without(list, drop []string) []string {
	var out []string
	for _, x := range list {
		if !contains(drop, x) {
			out = append(out, x)
		}
	}
	return out
}

// sorted returns params by name.
func sorted(ps map[string]*param) []*param {
	out := make([]*param, 0, len(ps))
	for _, p := range ps {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// underPath lists the parameters under path (one level, or all with recursive). AWS's
// public tree answers only a path inside it.
func (m *model) underPath(path string, recursive bool) []*param {
	src := m.params
	if isPublicName(path + "/") {
		src = m.public
	}
	prefix := strings.TrimSuffix(path, "/") + "/"
	var out []*param
	for _, p := range sorted(src) {
		rest, ok := strings.CutPrefix(p.Name, prefix)
		if !ok && path == "/" && !strings.Contains(p.Name, "/") {
			rest, ok = p.Name, true // names without a slash sit at the root
		}
		if ok && rest != "" && (recursive || !strings.Contains(rest, "/")) {
			out = append(out, p)
		}
	}
	return out
}

// setPublic replaces the public parameters, bumping the version of each whose value
// changed, as AWS does when it publishes a release.
func (m *model) setPublic(params []PublicParameter, now time.Time) {
	next := make(map[string]*param, len(params))
	for _, pp := range params {
		dt := or(pp.DataType, DataTypeText)
		p := m.public[pp.Name]
		if p == nil {
			p = &param{Name: pp.Name, public: true}
		}
		if len(p.Versions) == 0 || p.current().Value != pp.Value || p.current().DataType != dt {
			n := int64(1)
			if len(p.Versions) > 0 {
				n = p.current().Version + 1
			}
			p.Versions = append(p.Versions, &version{Version: n, Type: TypeString, Value: pp.Value, DataType: dt,
				Tier: TierStandard, LastModifiedDate: now})
			if len(p.Versions) > maxVersions {
				p.Versions = p.Versions[1:]
			}
		}
		next[pp.Name] = p
	}
	m.public = next
}

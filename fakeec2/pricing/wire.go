package pricing

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
)

const (
	targetPrefix  = "AWSPriceListService"
	formatVersion = "aws_v1"
	// onDemandTerm and rateSuffix are the codes AWS gives every on-demand hourly term.
	onDemandTerm = "JRTCKXETXF"
	rateSuffix   = "6YS6EN2CT7"
	// tokenTTL bounds a pagination token's life, past which it is expired.
	tokenTTL = time.Hour
)

// Service answers the Price List Query API for one region's price lists: AmazonEC2 (the
// catalog in opts) and AmazonEKS.
type Service struct {
	host    account.Host
	catalog *Catalog            // AmazonEC2's
	lists   map[string]*Catalog // by service code
	codes   []string            // the service codes, sorted
	docs    map[*Offer]string   // each offer's product document, encoded once
	table   map[string]account.JSONActionSpec
}

// New builds the service over host's region with the EC2 catalog in opts.
func New(host account.Host, opts Options) (*Service, error) {
	c, err := NewCatalog(host.Region(), opts)
	if err != nil {
		return nil, err
	}
	eks, err := NewEKSCatalog(host.Region(), opts)
	if err != nil {
		return nil, err
	}
	s := &Service{host: host, catalog: c, lists: map[string]*Catalog{ServiceCode: c, EKSServiceCode: eks},
		codes: []string{ServiceCode, EKSServiceCode}, docs: map[*Offer]string{}}
	for _, list := range []*Catalog{c, eks} {
		for _, o := range list.Offers {
			b, err := json.Marshal(productDocument(list, o))
			if err != nil {
				return nil, fmt.Errorf("pricing: encoding %s: %w", o.SKU, err)
			}
			s.docs[o] = string(b)
		}
	}
	s.table = map[string]account.JSONActionSpec{
		"GetProducts":        {Handler: account.JSONAction(s.getProducts), ReadOnly: true},
		"DescribeServices":   {Handler: account.JSONAction(s.describeServices), ReadOnly: true},
		"GetAttributeValues": {Handler: account.JSONAction(s.getAttributeValues), ReadOnly: true},
	}
	return s, nil
}

// Name is the SigV4 signing name.
func (s *Service) Name() string { return "pricing" }

// Catalog is the AmazonEC2 price list the service answers from.
func (s *Service) Catalog() *Catalog { return s.catalog }

// List is the price list of a service code, if the lab holds it.
func (s *Service) List(code string) (*Catalog, bool) {
	c, ok := s.lists[code]
	return c, ok
}

// Serve answers one awsJson1_1 call.
func (s *Service) Serve(c *account.Call) *account.Response {
	return account.ServeJSON(c, account.JSON11, targetPrefix, s.table)
}

// authorize checks the policy; Price List actions have no resource-level permissions.
func (s *Service) authorize(c *account.Call) *account.Error {
	action := "pricing:" + c.Action
	if reason := s.host.Authorize(c.Caller, action, "*"); reason != "" {
		c.DenialReason = reason
		return account.Errorf(http.StatusUnauthorized, "AccessDeniedException", "%s",
			account.NotAuthorizedMessage(s.host, c.Caller, action, "*"))
	}
	return nil
}

func invalid(format string, args ...any) *account.Error {
	return account.BadRequest("InvalidParameterException", format, args...)
}

// checkService validates the service code (required where code is non-nil) and returns its
// price list (nil for none named).
func (s *Service) checkService(code *string, required bool) (*Catalog, *account.Error) {
	switch {
	case code == nil && required:
		return nil, invalid("1 validation error detected: Value null at 'serviceCode' failed to satisfy constraint: Member must not be null")
	case code == nil:
		return nil, nil
	}
	list, ok := s.lists[*code]
	if !ok {
		return nil, account.BadRequest("NotFoundException", "Service code %s not found", *code)
	}
	return list, nil
}

func checkFormat(v *string) *account.Error {
	if v != nil && *v != formatVersion {
		return invalid("Invalid FormatVersion %s: the only supported format version is %s", *v, formatVersion)
	}
	return nil
}

// pageSize validates MaxResults against [1, max] and defaults it to def.
func pageSize(v *int64, max, def int) (int, *account.Error) {
	if v == nil {
		return def, nil
	}
	if *v < 1 || *v > int64(max) {
		return 0, invalid("1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value between 1 and %d", *v, max)
	}
	return int(*v), nil
}

type filterIn struct {
	Type  string `json:"Type"`
	Field string `json:"Field"`
	Value string `json:"Value"`
}

type getProductsIn struct {
	ServiceCode   *string    `json:"ServiceCode"`
	Filters       []filterIn `json:"Filters"`
	FormatVersion *string    `json:"FormatVersion"`
	MaxResults    *int64     `json:"MaxResults"`
	NextToken     *string    `json:"NextToken"`
}

type getProductsOut struct {
	FormatVersion string   `json:"FormatVersion"`
	NextToken     string   `json:"NextToken,omitempty"`
	PriceList     []string `json:"PriceList"`
}

func (s *Service) getProducts(c *account.Call, in *getProductsIn) (*getProductsOut, *account.Error) {
	if e := s.authorize(c); e != nil {
		return nil, e
	}
	list, e := s.checkService(in.ServiceCode, true)
	if e != nil {
		return nil, e
	}
	if e := checkFormat(in.FormatVersion); e != nil {
		return nil, e
	}
	max, e := pageSize(in.MaxResults, 100, 100)
	if e != nil {
		return nil, e
	}
	filters := make([]Filter, 0, len(in.Filters))
	for _, f := range in.Filters {
		mf := Filter{Type: f.Type, Field: f.Field, Value: f.Value}
		if why := ValidFilter(mf); why != "" {
			return nil, invalid("%s", why)
		}
		filters = append(filters, mf)
	}
	offers := list.Query(filters)
	start, e := s.start(c, in.NextToken, queryHash("GetProducts", *in.ServiceCode, filters), len(offers))
	if e != nil {
		return nil, e
	}
	end := min(start+max, len(offers))
	out := &getProductsOut{FormatVersion: formatVersion, PriceList: make([]string, 0, end-start)}
	for _, o := range offers[start:end] {
		out.PriceList = append(out.PriceList, s.docs[o])
	}
	if end < len(offers) {
		out.NextToken = s.token(c, queryHash("GetProducts", *in.ServiceCode, filters), end)
	}
	return out, nil
}

type describeServicesIn struct {
	ServiceCode   *string `json:"ServiceCode"`
	FormatVersion *string `json:"FormatVersion"`
	MaxResults    *int64  `json:"MaxResults"`
	NextToken     *string `json:"NextToken"`
}

type serviceOut struct {
	ServiceCode    string   `json:"ServiceCode"`
	AttributeNames []string `json:"AttributeNames"`
}

type describeServicesOut struct {
	FormatVersion string       `json:"FormatVersion"`
	NextToken     string       `json:"NextToken,omitempty"`
	Services      []serviceOut `json:"Services"`
}

func (s *Service) describeServices(c *account.Call, in *describeServicesIn) (*describeServicesOut, *account.Error) {
	if e := s.authorize(c); e != nil {
		return nil, e
	}
	named, e := s.checkService(in.ServiceCode, false)
	if e != nil {
		return nil, e
	}
	if e := checkFormat(in.FormatVersion); e != nil {
		return nil, e
	}
	max, e := pageSize(in.MaxResults, 100, 100)
	if e != nil {
		return nil, e
	}
	var lists []*Catalog
	if named != nil {
		lists = []*Catalog{named}
	} else {
		for _, code := range s.codes {
			lists = append(lists, s.lists[code])
		}
	}
	h := queryHash("DescribeServices", in.ServiceCode != nil)
	start, e := s.start(c, in.NextToken, h, len(lists))
	if e != nil {
		return nil, e
	}
	end := min(start+max, len(lists))
	out := &describeServicesOut{FormatVersion: formatVersion, Services: []serviceOut{}}
	for _, l := range lists[start:end] {
		out.Services = append(out.Services, serviceOut{ServiceCode: l.ServiceCode, AttributeNames: l.AttributeNames()})
	}
	if end < len(lists) {
		out.NextToken = s.token(c, h, end)
	}
	return out, nil
}

type getAttributeValuesIn struct {
	ServiceCode   *string `json:"ServiceCode"`
	AttributeName *string `json:"AttributeName"`
	MaxResults    *int64  `json:"MaxResults"`
	NextToken     *string `json:"NextToken"`
}

type attributeValue struct {
	Value string `json:"Value"`
}

type getAttributeValuesOut struct {
	AttributeValues []attributeValue `json:"AttributeValues"`
	NextToken       string           `json:"NextToken,omitempty"`
}

func (s *Service) getAttributeValues(c *account.Call, in *getAttributeValuesIn) (*getAttributeValuesOut, *account.Error) {
	if e := s.authorize(c); e != nil {
		return nil, e
	}
	list, e := s.checkService(in.ServiceCode, true)
	if e != nil {
		return nil, e
	}
	if in.AttributeName == nil || *in.AttributeName == "" {
		return nil, invalid("1 validation error detected: Value null at 'attributeName' failed to satisfy constraint: Member must not be null")
	}
	max, e := pageSize(in.MaxResults, 100, 100)
	if e != nil {
		return nil, e
	}
	values, ok := list.AttributeValues(*in.AttributeName)
	if !ok {
		return nil, account.BadRequest("NotFoundException", "Attribute name %s not found for service %s", *in.AttributeName, list.ServiceCode)
	}
	h := queryHash("GetAttributeValues", list.ServiceCode, *in.AttributeName)
	start, e := s.start(c, in.NextToken, h, len(values))
	if e != nil {
		return nil, e
	}
	end := min(start+max, len(values))
	out := &getAttributeValuesOut{AttributeValues: make([]attributeValue, 0, end-start)}
	for _, v := range values[start:end] {
		out.AttributeValues = append(out.AttributeValues, attributeValue{v})
	}
	if end < len(values) {
		out.NextToken = s.token(c, h, end)
	}
	return out, nil
}

// pageToken is a self-contained pagination token: where the next page starts, which query
// it continues and when it was issued.
type pageToken struct {
	Offset int    `json:"o"`
	Query  uint64 `json:"q"`
	Issued int64  `json:"t"`
}

func queryHash(parts ...any) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		fmt.Fprintf(h, "%v\x00", p)
	}
	return h.Sum64()
}

func (s *Service) token(c *account.Call, query uint64, offset int) string {
	b, _ := json.Marshal(pageToken{Offset: offset, Query: query, Issued: c.Now.Unix()}) // ints only
	return base64.RawURLEncoding.EncodeToString(b)
}

// start decodes token (nil: the first page) into the offset it names in a list of n.
func (s *Service) start(c *account.Call, token *string, query uint64, n int) (int, *account.Error) {
	if token == nil {
		return 0, nil
	}
	bad := account.BadRequest("InvalidNextTokenException", "The pagination token is invalid. Try again without a pagination token.")
	raw, err := base64.RawURLEncoding.DecodeString(*token)
	if err != nil {
		return 0, bad
	}
	var t pageToken
	if json.Unmarshal(raw, &t) != nil || t.Query != query || t.Offset < 0 || t.Offset > n {
		return 0, bad
	}
	if c.Now.Sub(time.Unix(t.Issued, 0)) > tokenTTL {
		return 0, account.BadRequest("ExpiredNextTokenException", "The pagination token expired. Try again without a pagination token.")
	}
	return t.Offset, nil
}

// productDocument is one PriceList entry, shaped and ordered as AWS's.
type productDoc struct {
	Product struct {
		ProductFamily string            `json:"productFamily"`
		Attributes    map[string]string `json:"attributes"`
		SKU           string            `json:"sku"`
	} `json:"product"`
	ServiceCode string `json:"serviceCode"`
	Terms       struct {
		OnDemand map[string]termDoc `json:"OnDemand"`
	} `json:"terms"`
	Version         string `json:"version"`
	PublicationDate string `json:"publicationDate"`
}

type termDoc struct {
	PriceDimensions map[string]dimensionDoc `json:"priceDimensions"`
	SKU             string                  `json:"sku"`
	EffectiveDate   string                  `json:"effectiveDate"`
	OfferTermCode   string                  `json:"offerTermCode"`
	TermAttributes  map[string]string       `json:"termAttributes"`
}

type dimensionDoc struct {
	Unit         string            `json:"unit"`
	EndRange     string            `json:"endRange"`
	Description  string            `json:"description"`
	AppliesTo    []string          `json:"appliesTo"`
	RateCode     string            `json:"rateCode"`
	BeginRange   string            `json:"beginRange"`
	PricePerUnit map[string]string `json:"pricePerUnit"`
}

func productDocument(c *Catalog, o *Offer) *productDoc {
	d := &productDoc{ServiceCode: c.ServiceCode,
		Version:         c.Published.Format("20060102150405"),
		PublicationDate: account.ISO8601(c.Published)}
	d.Product.ProductFamily, d.Product.Attributes, d.Product.SKU = o.ProductFamily, o.Attributes, o.SKU
	term := o.SKU + "." + onDemandTerm
	rate := term + "." + rateSuffix
	d.Terms.OnDemand = map[string]termDoc{term: {
		PriceDimensions: map[string]dimensionDoc{rate: {
			Unit: "Hrs", EndRange: "Inf", Description: o.Description, AppliesTo: []string{},
			RateCode: rate, BeginRange: "0", PricePerUnit: map[string]string{"USD": price(o.USDPerHour)},
		}},
		SKU: o.SKU, EffectiveDate: account.ISO8601(c.Published), OfferTermCode: onDemandTerm,
		TermAttributes: map[string]string{},
	}}
	return d
}

// price writes USD as AWS does ("0.1110000000"), with more digits only when ten would
// not read back as the same float.
func price(usd float64) string {
	s := strconv.FormatFloat(usd, 'f', 10, 64)
	if back, err := strconv.ParseFloat(s, 64); err != nil || back != usd {
		return strconv.FormatFloat(usd, 'f', -1, 64)
	}
	return s
}

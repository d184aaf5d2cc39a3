package wire

// The XML shapes of what a person asks about the account itself: DescribeRegions,
// DescribeAccountAttributes, and the lists the lab always answers empty
// (DescribeKeyPairs, DescribeAddresses, DescribePlacementGroups).

// RegionItem is a region as DescribeRegions answers it.
type RegionItem struct {
	RegionName  string `xml:"regionName"`
	Endpoint    string `xml:"regionEndpoint"`
	OptInStatus string `xml:"optInStatus"`
}

// Region renders the region name with its opt-in status.
func Region(name, optInStatus string) RegionItem {
	return RegionItem{RegionName: name, Endpoint: "ec2." + name + ".amazonaws.com", OptInStatus: optInStatus}
}

// DescribeRegionsResponse is the body of its action's answer.
type DescribeRegionsResponse struct {
	Header
	Regions []RegionItem `xml:"regionInfo>item"`
}

// AccountAttributeItem is an attribute as DescribeAccountAttributes answers it.
type AccountAttributeItem struct {
	Name   string         `xml:"attributeName"`
	Values []xmlAttrValue `xml:"attributeValueSet>item"`
}

type xmlAttrValue struct {
	Value string `xml:"attributeValue"`
}

// AccountAttribute renders the attribute name with its values.
func AccountAttribute(name string, values []string) AccountAttributeItem {
	return AccountAttributeItem{Name: name, Values: Items(values, func(v string) xmlAttrValue { return xmlAttrValue{Value: v} })}
}

// DescribeAccountAttributesResponse is the body of its action's answer.
type DescribeAccountAttributesResponse struct {
	Header
	Attributes []AccountAttributeItem `xml:"accountAttributeSet>item"`
}

// DescribeKeyPairsResponse is the body of its action's answer, always an empty list.
type DescribeKeyPairsResponse struct {
	Header
	KeyPairs []struct {
		KeyName string `xml:"keyName"`
	} `xml:"keySet>item"`
}

// DescribeAddressesResponse is the body of its action's answer, always an empty list.
type DescribeAddressesResponse struct {
	Header
	Addresses []struct {
		PublicIP string `xml:"publicIp"`
	} `xml:"addressesSet>item"`
}

// DescribePlacementGroupsResponse is the body of its action's answer, always an empty list.
type DescribePlacementGroupsResponse struct {
	Header
	PlacementGroups []struct{} `xml:"placementGroupSet>item"`
}

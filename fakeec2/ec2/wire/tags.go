package wire

// The XML shape of DescribeTags: one item per tag of each resource.

// TagDescriptionItem is one tag of one resource as DescribeTags answers it.
type TagDescriptionItem struct {
	ResourceID   string `xml:"resourceId"`
	ResourceType string `xml:"resourceType"`
	Key          string `xml:"key"`
	Value        string `xml:"value"`
}

// DescribeTagsResponse is the body of its action's answer.
type DescribeTagsResponse struct {
	Header
	Tags      []TagDescriptionItem `xml:"tagSet>item"`
	NextToken string               `xml:"nextToken,omitempty"`
}

package labs

import (
	"errors"
	"io"
)

// WriteHTML writes a self-contained evidence page.
func (ev *Evidence) WriteHTML(w io.Writer) error {
	return errors.New("the HTML evidence page is not built yet")
}

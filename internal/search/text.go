package search

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeText turns a document's bytes into text. UTF-8 (with or without a
// byte-order mark) is used as is; UTF-16 with a byte-order mark and
// Windows-1252 (a superset of Latin-1 for printable text) are decoded. Bytes
// that are none of these, a document that already holds U+FFFD replacement
// characters, or binary content (control characters) are refused with the
// reason, so no replacement character ever reaches a prompt or a report.
func DecodeText(b []byte) (string, error) {
	switch {
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		b = b[3:]
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		return decodeUTF16(b[2:], false)
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return decodeUTF16(b[2:], true)
	}
	if utf8.Valid(b) {
		return checkText(string(b), "UTF-8")
	}
	return decodeWindows1252(b)
}

func decodeUTF16(b []byte, bigEndian bool) (string, error) {
	if len(b)%2 != 0 {
		return "", fmt.Errorf("starts with a UTF-16 byte-order mark but has an odd number of bytes")
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		if bigEndian {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			u[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
		}
	}
	for i := 0; i < len(u); i++ {
		switch {
		case utf16.IsSurrogate(rune(u[i])) && u[i] < 0xDC00 && i+1 < len(u) && u[i+1] >= 0xDC00 && u[i+1] <= 0xDFFF:
			i++
		case utf16.IsSurrogate(rune(u[i])):
			return "", fmt.Errorf("is not valid UTF-16 (unpaired surrogate)")
		}
	}
	return checkText(string(utf16.Decode(u)), "UTF-16")
}

// cp1252 maps the bytes 0x80–0x9F of Windows-1252; 0 marks the five bytes
// the code page leaves undefined.
var cp1252 = [32]rune{
	'€', 0, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0, 'Ž', 0,
	0, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0, 'ž', 'Ÿ',
}

func decodeWindows1252(b []byte) (string, error) {
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/4)
	for _, c := range b {
		switch {
		case c < 0x80:
			sb.WriteByte(c)
		case c < 0xA0:
			r := cp1252[c-0x80]
			if r == 0 {
				return "", fmt.Errorf("is neither UTF-8, UTF-16 with a byte-order mark nor Windows-1252/Latin-1 text (byte 0x%02X); save it as UTF-8", c)
			}
			sb.WriteRune(r)
		default: // Latin-1 and Windows-1252 agree from 0xA0 on
			sb.WriteRune(rune(c))
		}
	}
	return checkText(sb.String(), "Windows-1252")
}

// checkText refuses decoded text that is not a text document: control
// characters other than tab, newline, carriage return and form feed (binary
// content such as a PDF or a spreadsheet), or U+FFFD left by an earlier
// lossy conversion.
func checkText(s, encoding string) (string, error) {
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			return "", fmt.Errorf("contains U+FFFD replacement characters (text damaged by an earlier conversion); save the original as UTF-8")
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f', r == 0x7F:
			return "", fmt.Errorf("is not a text document (%s with control character U+%04X); convert it to Markdown or plain text", encoding, r)
		}
	}
	return s, nil
}

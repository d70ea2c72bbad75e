package chat

// Request is POST /api/chat's body.
type Request struct {
	ChatID  string `json:"chat_id"`
	Message string `json:"message"`
}

// Accepted is POST /api/chat's answer when the turn runs in the background.
type Accepted struct {
	ChatID string `json:"chat_id"`
	Turn   int    `json:"turn"`
	Events string `json:"events"`
}

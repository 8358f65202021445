package connlimit

// Idle connections sit on two lists at once (all idle, and their peer's
// idle), linked through the connections themselves: no allocation as a
// connection goes idle and active again on every request.
const (
	byAll = iota
	byPeer
)

type links struct{ prev, next *conn }

// list is a doubly linked list of connections through links[which], oldest
// first.
type list struct{ head, tail *conn }

func (ls *list) push(c *conn, which int) {
	c.links[which] = links{prev: ls.tail}
	if ls.tail != nil {
		ls.tail.links[which].next = c
	} else {
		ls.head = c
	}
	ls.tail = c
}

func (ls *list) remove(c *conn, which int) {
	l := c.links[which]
	if l.prev != nil {
		l.prev.links[which].next = l.next
	} else {
		ls.head = l.next
	}
	if l.next != nil {
		l.next.links[which].prev = l.prev
	} else {
		ls.tail = l.prev
	}
	c.links[which] = links{}
}

func (ls *list) oldest() *conn { return ls.head }

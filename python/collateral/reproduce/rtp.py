"""A video call's packets as the core's encoder cuts them (``media::encoder``: RFC 8593's
synthetic codec): at most 1200 bytes of payload a packet, and 40 bytes of RTP (12), UDP
and IP (28) on each; the studies' bounds on a call's rate and frames use them."""

MEDIA_PAYLOAD, MEDIA_HEADERS = 1200, 40

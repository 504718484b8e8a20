# Man pages: one Markdown page per call or group of calls in
# man/, converted by pandoc at build time as rdma-core does.
#
#   make man       build/man/*.1, *.3 and *.7, and a ".so" link for every name
#                  a page documents besides its own (its NAME line,
#                  scripts/man-names.sh); also part of make all
#   make install   also installs them in $(MANDIR)/man1, man3 and man7
#   make check     scripts/check-man.sh: a page or link for every export,
#                  groff without a warning, SYNOPSIS = the headers, install
#
#   man -l build/man/oms_put.3

MANDIR ?= $(PREFIX)/share/man
PANDOC ?= pandoc
MAN_SRCS := $(sort $(wildcard man/*.1.md man/*.3.md man/*.7.md))
MAN_PAGES := $(MAN_SRCS:man/%.md=$(B)/man/%)
# "alias.3=page.3" for every other name of a page
MAN_LINK_PAIRS := $(shell sh scripts/man-names.sh links $(MAN_SRCS))
MAN_LINKS := $(foreach p,$(MAN_LINK_PAIRS),$(B)/man/$(firstword $(subst =, ,$(p))))

.PHONY: man install-man uninstall-man
all: man
install: install-man

# What is not a page or link of man/ any more goes, so that a deleted page
# cannot be passed off by its old output.
man: $(MAN_PAGES) $(MAN_LINKS)
	$(Q)for f in $(B)/man/*; do \
		case " $(MAN_PAGES) $(MAN_LINKS) " in \
		*" $$f "*) ;; \
		*) rm -f "$$f" ;; \
		esac; \
	done

# No hyphenation: a call's name is never broken across lines.
$(B)/man/%: man/%.md mk/man.mk
	$(call msg,PANDOC,$@)
	$(Q)command -v $(PANDOC) >/dev/null 2>&1 || { \
		echo "liboms: the man pages need pandoc, which is not installed:" \
		     "run 'make deps' as root (or apt-get install pandoc)" >&2; \
		exit 1; }
	$(Q)mkdir -p $(@D)
	$(Q)$(PANDOC) -s -f markdown -t man -M hyphenate=false -o $@ $<

# $(1): the link (alias.3), $(2): the page it names (page.3).
define MAN_LINK_RULE
$(B)/man/$(1): man/$(2).md
	$$(call msg,MANLINK,$$@)
	$(Q)mkdir -p $$(@D)
	$(Q)echo '.so man$(subst .,,$(suffix $(2)))/$(2)' >$$@
endef
$(foreach p,$(MAN_LINK_PAIRS),$(eval $(call MAN_LINK_RULE,$(firstword \
	$(subst =, ,$(p))),$(lastword $(subst =, ,$(p))))))

uninstall: uninstall-man
uninstall-man:
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(filter %.1,$(MAN_PAGES)))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(filter %.3,$(MAN_PAGES) $(MAN_LINKS)))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man7/,$(notdir $(filter %.7,$(MAN_PAGES))))

install-man: man
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(MANDIR)/man7
	install -m 644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(filter %.3,$(MAN_PAGES) $(MAN_LINKS)) \
		$(DESTDIR)$(MANDIR)/man3/
	install -m 644 $(filter %.7,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man7/

CHECK_CMDS += "sh scripts/check-man.sh $(B) $(INST_PROG_NAMES)"

"""Offline support kits: ``oomwizard kit DIR`` and the single-file ``oomwizard.pyz``.

Built on a connected machine, carried to one without network: the oomwizard wheel and every
dependency wheel for the chosen Pythons and platforms (fetched by pip itself), the knowledge base
as HTML, ``SHA256SUMS``, ``install.sh`` and a README in English and Chinese.
"""
